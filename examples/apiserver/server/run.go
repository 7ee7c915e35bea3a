package server

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
	"strings"
	"syscall"
	"time"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/serve"
)

// Metrics is what the example server needs of a metrics implementation:
// the module github.com/kapi-dev/kapi/metrics's Metrics (its cmd/apiserver
// is this server with /metrics).
type Metrics interface {
	serve.Observer
	registry.Metrics
	Handler() http.Handler
}

// NewMetrics makes the Metrics of a server whose stored objects count
// counts.
type NewMetrics func(count func(context.Context) (map[string]int64, error)) Metrics

// Main is the example server's command: it parses the command line (kube-apiserver's
// flag names) and serves until SIGINT or SIGTERM, then shuts down
// gracefully. newMetrics may be nil (no /metrics).
func Main(newMetrics NewMetrics) {
	if err := run(os.Args[1:], newMetrics); err != nil {
		fmt.Fprintln(os.Stderr, "apiserver:", err)
		os.Exit(1)
	}
}

func run(args []string, newMetrics NewMetrics) error {
	fs := flag.NewFlagSet("apiserver", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:8080", "address to serve on (HOST:PORT)")
	kubeconfig := fs.String("kubeconfig", "", "if set, write a kubeconfig for this server to this path")
	crdDir := fs.String("crds", "", "if set, also serve the CustomResourceDefinitions in the manifests of this directory")
	var auth Auth
	fs.StringVar(&auth.TokenAuthFile, "token-auth-file", "", "bearer tokens, one \"token,user,uid,\\\"group1,group2\\\"\" line each (as kube-apiserver's); serves https")
	fs.StringVar(&auth.ClientCAFile, "client-ca-file", "", "authenticate client certificates signed by these CAs (CN the user, O the groups); serves https")
	fs.StringVar(&auth.RequestHeaderClientCAFile, "requestheader-client-ca-file", "", "trust X-Remote-User, X-Remote-Group and X-Remote-Extra-* from a front proxy whose client certificate these CAs sign; serves https")
	allowedNames := fs.String("requestheader-allowed-names", "", "comma-separated common names the front proxy's certificate may have (any when empty)")
	anonymous := fs.Bool("anonymous-auth", true, "serve requests without credentials as system:anonymous (with --token-auth-file or --client-ca-file)")
	fs.StringVar(&auth.AuthorizationMode, "authorization-mode", "AlwaysAllow", "AlwaysAllow or RBAC")
	var opts serve.Options
	fs.StringVar(&opts.TLS.CertFile, "tls-cert-file", "", "serve https with this certificate (PEM, re-read when it changes); with credentials or --cert-dir and no certificate, a self-signed one is made (and trusted by --kubeconfig's)")
	fs.StringVar(&opts.TLS.KeyFile, "tls-private-key-file", "", "the key of --tls-cert-file (PEM)")
	fs.StringVar(&opts.TLS.CertDir, "cert-dir", "", "keep the self-signed certificate (apiserver.crt, apiserver.key, ca.crt) in this directory and serve https; ignored with --tls-cert-file")
	fs.IntVar(&opts.Limits.MaxRequestsInFlight, "max-requests-inflight", 400, "read-only requests served at once; more answer 429 (0: no limit)")
	fs.IntVar(&opts.Limits.MaxMutatingRequestsInFlight, "max-mutating-requests-inflight", 200, "mutating requests served at once; more answer 429 (0: no limit)")
	fs.DurationVar(&opts.Limits.RequestTimeout, "request-timeout", 60*time.Second, "how long a request that is not a watch may take (a shorter ?timeout= wins)")
	fs.DurationVar(&opts.ShutdownDelay, "shutdown-delay-duration", 0, "on SIGTERM, keep serving this long with /readyz failing before closing the listener")
	verbosity := fs.Int("v", 0, "log level: 0 errors and warnings, 1 also each request, 4 also debug (failed TLS handshakes)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	auth.DisableAnonymous = !*anonymous
	if *allowedNames != "" {
		auth.RequestHeaderAllowedNames = strings.Split(*allowedNames, ",")
	}
	// kube's 0 is no limit; serve's is its default.
	for _, n := range []*int{&opts.Limits.MaxRequestsInFlight, &opts.Limits.MaxMutatingRequestsInFlight} {
		if *n == 0 {
			*n = -1
		}
	}
	level := slog.LevelWarn
	switch {
	case *verbosity >= 4:
		level = slog.LevelDebug
	case *verbosity >= 1:
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	opts.Logger = log

	var crds []schema.CRD
	if *crdDir != "" {
		var err error
		if crds, err = schema.LoadCRDs(*crdDir); err != nil {
			return err
		}
	}
	ro := registry.Options{Logger: log}
	var reg *registry.Registry
	if newMetrics != nil {
		m := newMetrics(func(ctx context.Context) (map[string]int64, error) { return reg.CountObjects(ctx) })
		ro.Metrics, opts.Observer, opts.Metrics = m, m, m.Handler()
	}
	reg, err := New(Options{Registry: ro, CRDs: crds, Auth: auth})
	if err != nil {
		return err
	}
	defer reg.Close()
	opts.Checks = []serve.Check{{Name: "etcd", Check: reg.Ping}}
	opts.ReadyChecks = []serve.Check{{Name: "informer-sync", Check: reg.Synced}}
	// Credentials go over https only: client-go sends no bearer token to
	// an http server. Without them the example speaks plain http, on
	// loopback unless told otherwise.
	opts.TLS.Disabled = opts.TLS.CertFile == "" && opts.TLS.CertDir == "" && !auth.enabled()
	s, err := serve.New(reg, opts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	if !auth.enabled() && !isLoopback(ln.Addr()) {
		log.Warn("serving without authentication on a non-loopback address: anyone who can reach it can do anything", "address", ln.Addr().String())
	}
	scheme := "https"
	if opts.TLS.Disabled {
		scheme = "http"
	}
	url := scheme + "://" + ln.Addr().String()
	if *kubeconfig != "" {
		if err := os.WriteFile(*kubeconfig, KubeconfigFor(url, Credentials{CertificateAuthPEM: s.CertificateAuthority()}), 0o600); err != nil {
			return err
		}
		fmt.Println("wrote kubeconfig to", *kubeconfig)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	fmt.Println("serving the kapi example API at", url)
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	stop() // a second signal kills
	shutdown, cancel := context.WithTimeout(context.Background(), opts.ShutdownDelay+opts.Limits.RequestTimeout)
	defer cancel()
	if err := s.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return <-served
}

func isLoopback(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return ok && t.IP.IsLoopback()
}
