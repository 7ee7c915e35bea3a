package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
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
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "apiserver:", err)
		os.Exit(1)
	}
}

func run() error {
	listen := flag.String("listen", "127.0.0.1:8080", "address to serve on (HOST:PORT)")
	kubeconfig := flag.String("kubeconfig", "", "if set, write a kubeconfig for this server to this path")
	crdDir := flag.String("crds", "", "if set, also serve the CustomResourceDefinitions in the manifests of this directory")
	flag.Parse()

	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	var crds []schema.CRD
	if *crdDir != "" {
		var err error
		if crds, err = schema.LoadCRDs(*crdDir); err != nil {
			return err
		}
	}
	reg, err := server.New(server.Options{Registry: registry.Options{Logger: log}, CRDs: crds})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	url := "http://" + ln.Addr().String()
	if *kubeconfig != "" {
		if err := os.WriteFile(*kubeconfig, server.Kubeconfig(url), 0o600); err != nil {
			return err
		}
		fmt.Println("wrote kubeconfig to", *kubeconfig)
	}
	srv := &http.Server{Handler: reg, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	fmt.Println("serving the kapi example API at", url)
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
