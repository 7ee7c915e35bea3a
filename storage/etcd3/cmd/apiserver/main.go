package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/serve"
	"github.com/kapi-dev/kapi/storage/etcd3"
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
	servers                   string
	caFile, certFile, keyFile string
	prefix                    string
	timeout                   time.Duration
	addr                      string
	kubeconfig                string
	crds                      string
	embedded, embeddedAddr    string
}

func parse(args []string, out io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("apiserver", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&c.servers, "etcd-servers", "", "etcd client URLs, comma-separated (https:// with the TLS flags)")
	fs.StringVar(&c.caFile, "etcd-cafile", "", "CA bundle that verifies etcd's serving certificate")
	fs.StringVar(&c.certFile, "etcd-certfile", "", "client certificate for etcd")
	fs.StringVar(&c.keyFile, "etcd-keyfile", "", "key of the client certificate for etcd")
	fs.StringVar(&c.prefix, "etcd-prefix", "/kapi", "prefix of every key in etcd; replicas share it")
	fs.DurationVar(&c.timeout, "etcd-timeout", etcd3.DefaultTimeout, "bound of every etcd call; past it a request answers 503 or 504")
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "address to serve the API on (HOST:PORT)")
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "if set, write a kubeconfig for this server to this path")
	fs.StringVar(&c.crds, "crds", "", "if set, also serve the CustomResourceDefinitions in the manifests of this directory")
	fs.StringVar(&c.embedded, "embedded-etcd", "", "if set, start an embedded etcd with its data in this directory and use it")
	fs.StringVar(&c.embeddedAddr, "embedded-etcd-addr", "127.0.0.1:2379", "client address of the embedded etcd; its peer port is the next one (port 0: any free ports)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.servers == "" && c.embedded == "" {
		return c, errors.New("one of --etcd-servers and --embedded-etcd is required")
	}
	if (c.certFile == "") != (c.keyFile == "") {
		return c, errors.New("--etcd-certfile and --etcd-keyfile go together")
	}
	return c, nil
}

// run serves until ctx is done, then shuts down; it writes what it
// serves where to stdout.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	cfg, err := parse(args, stdout)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))

	var endpoints []string
	if cfg.servers != "" {
		endpoints = strings.Split(cfg.servers, ",")
	}
	if cfg.embedded != "" {
		e, err := startEtcd(cfg.embedded, cfg.embeddedAddr)
		if err != nil {
			return fmt.Errorf("embedded etcd: %w", err)
		}
		defer e.Close()
		u := "http://" + e.Clients[0].Addr().String()
		fmt.Fprintln(stdout, "embedded etcd serving at", u, "with its data in", cfg.embedded)
		if endpoints == nil {
			endpoints = []string{u}
		}
	}

	cc := clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
		// Reconnect within a second or two once etcd is back (gRPC's
		// default backoff grows to two minutes).
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 2 * time.Second},
			MinConnectTimeout: 5 * time.Second,
		})},
	}
	if cc.TLS, err = tlsConfig(cfg); err != nil {
		return err
	}
	client, err := clientv3.New(cc)
	if err != nil {
		return fmt.Errorf("etcd client: %w", err)
	}
	defer client.Close()

	sctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	prefix := strings.TrimSuffix(cfg.prefix, "/")
	// The etcd client waits for a connection until its ctx ends, without
	// saying why there is none: a probe of each endpoint keeps the last
	// reason (a TLS handshake refused, say) for the error.
	pctx, stopProbe := context.WithCancel(sctx)
	probed := probe(pctx, endpoints, cc.TLS)
	failed := func(err error) error {
		stopProbe()
		msg := fmt.Sprintf("etcd at %s", strings.Join(endpoints, ","))
		for _, perr := range <-probed {
			msg += fmt.Sprintf(" (%v)", perr)
		}
		return fmt.Errorf("%s: %w", msg, err)
	}
	tokens, err := etcd3.SharedTokens(sctx, client, prefix+".continue-secret")
	if err != nil {
		return failed(err)
	}
	st, err := etcd3.New(sctx, etcd3.Options{Client: client, Prefix: prefix, Tokens: tokens, Timeout: cfg.timeout})
	if err != nil {
		return failed(err)
	}
	stopProbe()
	defer st.Close()

	var crds []schema.CRD
	if cfg.crds != "" {
		if crds, err = schema.LoadCRDs(cfg.crds); err != nil {
			return err
		}
	}
	reg, err := server.New(server.Options{Storage: st, Registry: registry.Options{Logger: log}, CRDs: crds})
	if err != nil {
		return err
	}
	defer reg.Close()
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	u := "http://" + ln.Addr().String()
	if cfg.kubeconfig != "" {
		if err := os.WriteFile(cfg.kubeconfig, server.Kubeconfig(u), 0o600); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "wrote kubeconfig to", cfg.kubeconfig)
	}
	// Served as kube-apiserver serves (package serve): on SIGTERM the
	// watches end cleanly and their clients re-watch on another replica
	// of the same etcd.
	srv, err := serve.New(reg, serve.Options{TLS: serve.TLS{Disabled: true}, Logger: log,
		Checks: []serve.Check{{Name: "etcd", Check: reg.Ping}}})
	if err != nil {
		return err
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
		_ = reg.Close() // stops its garbage collector, a watcher of st
		st.Close()
	}()
	fmt.Fprintln(stdout, "serving the kapi example API at", u, "on etcd", strings.Join(endpoints, ","), "prefix", prefix)
	if err := srv.Serve(ln); err != nil {
		return err
	}
	<-stopped
	return nil
}

// tlsConfig is the client TLS configuration the --etcd-* files ask for,
// or nil.
func tlsConfig(cfg config) (*tls.Config, error) {
	if cfg.caFile == "" && cfg.certFile == "" {
		return nil, nil
	}
	info := transport.TLSInfo{TrustedCAFile: cfg.caFile, CertFile: cfg.certFile, KeyFile: cfg.keyFile}
	tc, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("etcd TLS: %w", err)
	}
	return tc, nil
}

// startEtcd starts a single-member etcd with its data in dir, serving
// clients on addr and peers on the next port, on plain HTTP.
func startEtcd(dir, addr string) (*embed.Etcd, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil, fmt.Errorf("port of %q: %w", addr, err)
	}
	peer := 0
	if p != 0 {
		peer = p + 1
	}
	cu := url.URL{Scheme: "http", Host: net.JoinHostPort(host, port)}
	pu := url.URL{Scheme: "http", Host: net.JoinHostPort(host, strconv.Itoa(peer))}
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{cu}, []url.URL{cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{pu}, []url.URL{pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{"stderr"}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case err := <-e.Err():
		e.Close()
		return nil, err
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, errors.New("not ready after 60s")
	}
}
