// Command aggregated is an aggregated API server built on kapi: it serves
// fleet.example.com/v1 Gizmos from kapi's memory store (no etcd) behind
// kube-aggregator, authenticates the front proxy's headers by its client
// certificate, and delegates bearer tokens and authorization to the main
// API server. See README.md for the APIService and the setup.
package main

import (
	"context"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/kapi-dev/kapi/examples/aggregated/server"
	"github.com/kapi-dev/kapi/serve"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "aggregated:", err)
		os.Exit(1)
	}
}

func run() error {
	listen := flag.String("listen", "0.0.0.0:8443", "address to serve on (HOST:PORT)")
	var opts serve.Options
	flag.StringVar(&opts.TLS.CertFile, "tls-cert-file", "", "the serving certificate (PEM; re-read when it changes); without it a self-signed one is made for --tls-hosts")
	flag.StringVar(&opts.TLS.KeyFile, "tls-private-key-file", "", "the key of --tls-cert-file")
	flag.StringVar(&opts.TLS.CertDir, "cert-dir", "", "keep the self-signed certificate (apiserver.crt, apiserver.key, ca.crt: the APIService's caBundle) in this directory")
	hosts := flag.String("tls-hosts", "gizmo-api.gizmos.svc,localhost,127.0.0.1", "comma-separated names of the self-signed certificate: SERVICE.NAMESPACE.svc is the name kube-aggregator checks")
	caFile := flag.String("requestheader-client-ca-file", "", "the CA of kube-aggregator's proxy client certificate (kube-apiserver's --requestheader-client-ca-file); required")
	allowed := flag.String("requestheader-allowed-names", "", "comma-separated common names the proxy's certificate may have (any when empty)")
	kubeconfig := flag.String("authentication-kubeconfig", "", "kubeconfig of the main API server, for TokenReviews and SubjectAccessReviews; in-cluster configuration when empty")
	flag.IntVar(&opts.Limits.MaxRequestsInFlight, "max-requests-inflight", 400, "read-only requests served at once")
	flag.IntVar(&opts.Limits.MaxMutatingRequestsInFlight, "max-mutating-requests-inflight", 200, "mutating requests served at once")
	flag.DurationVar(&opts.Limits.RequestTimeout, "request-timeout", 60*time.Second, "how long a request that is not a watch may take")
	flag.DurationVar(&opts.ShutdownDelay, "shutdown-delay-duration", 0, "on SIGTERM, keep serving this long with /readyz failing")
	verbosity := flag.Int("v", 0, "log level: 0 errors and warnings, 1 also each request, 4 also debug")
	flag.Parse()
	level := slog.LevelWarn
	if *verbosity >= 4 {
		level = slog.LevelDebug
	} else if *verbosity >= 1 {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	opts.Logger = log
	opts.TLS.Hosts = strings.Split(*hosts, ",")

	if *caFile == "" {
		return errors.New("--requestheader-client-ca-file is required")
	}
	pem, err := os.ReadFile(*caFile)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return fmt.Errorf("--requestheader-client-ca-file %s: no PEM certificate in it", *caFile)
	}
	main, err := server.DelegateFromKubeconfig(*kubeconfig)
	if err != nil {
		return err
	}
	ro := server.Options{RequestHeaderCA: pool, Main: main, Logger: log}
	if *allowed != "" {
		ro.AllowedNames = strings.Split(*allowed, ",")
	}
	reg, err := server.New(ro)
	if err != nil {
		return err
	}
	defer reg.Close()
	opts.Checks = []serve.Check{{Name: "storage", Check: reg.Ping}}
	opts.ReadyChecks = []serve.Check{{Name: "informer-sync", Check: reg.Synced}}
	s, err := serve.New(reg, opts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	fmt.Println("serving fleet.example.com/v1 at https://" + ln.Addr().String())
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	stop()
	shutdown, cancel := context.WithTimeout(context.Background(), opts.ShutdownDelay+opts.Limits.RequestTimeout)
	defer cancel()
	if err := s.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return <-served
}
