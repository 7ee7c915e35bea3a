package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/storage/durable"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "apiserver:", err)
		os.Exit(1)
	}
}

// config is what the flags say.
type config struct {
	dataDir, restore string
	backup           string
	listen           string
	kubeconfig       string
	crds             string
	adopt            bool
}

func parse(args []string, out io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("apiserver", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&c.dataDir, "data-dir", "", "keep the objects in this directory (created if needed)")
	fs.StringVar(&c.restore, "restore", "", "if set, first restore this backup into --data-dir, which must hold no store")
	fs.BoolVar(&c.adopt, "adopt", false, "if set, first take the database in --data-dir, whose revision marker is lost, as it is (once checked that it reads whole)")
	fs.StringVar(&c.backup, "backup", "", "on SIGUSR1, write a backup of the store to this file (replaced atomically) while serving")
	fs.StringVar(&c.listen, "listen", "127.0.0.1:8080", "address to serve on (HOST:PORT)")
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "if set, write a kubeconfig for this server to this path")
	fs.StringVar(&c.crds, "crds", "", "if set, also serve the CustomResourceDefinitions in the manifests of this directory")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.dataDir == "" {
		return c, errors.New("--data-dir is required")
	}
	return c, nil
}

// run serves until ctx is done, then closes the store (its file stays
// consistent however the process ends: every acknowledged write is on
// disk before its answer).
func run(ctx context.Context, args []string, out io.Writer) error {
	c, err := parse(args, out)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	var crds []schema.CRD
	if c.crds != "" {
		if crds, err = schema.LoadCRDs(c.crds); err != nil {
			return err
		}
	}
	if c.restore != "" {
		if err := durable.Restore(c.restore, c.dataDir); err != nil {
			return err
		}
	}
	if c.adopt {
		if err := durable.Adopt(c.dataDir); err != nil {
			return err
		}
	}
	start := time.Now()
	store, err := durable.Open(c.dataDir, durable.Options{})
	if err != nil {
		return err
	}
	defer store.Close()
	rev, _ := store.Revision(ctx)
	log.Info("opened the data directory", "path", store.Path(), "revision", rev, "took", time.Since(start).Round(time.Millisecond))
	if c.backup != "" {
		go backupOnSignal(ctx, store, c.backup, log)
	}
	reg, err := server.New(server.Options{Storage: store, Registry: registry.Options{Logger: log}, CRDs: crds})
	if err != nil {
		return err
	}
	defer reg.Close()
	ln, err := net.Listen("tcp", c.listen)
	if err != nil {
		return err
	}
	url := "http://" + ln.Addr().String()
	if c.kubeconfig != "" {
		if err := os.WriteFile(c.kubeconfig, server.KubeconfigFor(url, server.Credentials{}), 0o600); err != nil {
			return err
		}
		fmt.Fprintln(out, "wrote kubeconfig to", c.kubeconfig)
	}
	srv := &http.Server{Handler: reg, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	fmt.Fprintln(out, "serving the kapi example API at", url)
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// backupOnSignal writes a backup of store to path on every SIGUSR1 until
// ctx is done.
func backupOnSignal(ctx context.Context, store *durable.Store, path string, log *slog.Logger) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	defer signal.Stop(sig)
	for {
		select {
		case <-ctx.Done():
			return
		case <-sig:
			rev, _ := store.Revision(ctx)
			if err := store.BackupFile(ctx, path); err != nil {
				log.Error("backup failed", "path", path, "err", err)
				continue
			}
			log.Info("wrote a backup", "path", path, "revision", rev)
		}
	}
}
