package main

import (
	"context"
	"crypto/tls"
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
	var auth server.Auth
	flag.StringVar(&auth.TokenAuthFile, "token-auth-file", "", "bearer tokens, one \"token,user,uid,\\\"group1,group2\\\"\" line each (as kube-apiserver's); serves https")
	flag.StringVar(&auth.ClientCAFile, "client-ca-file", "", "authenticate client certificates signed by these CAs (CN the user, O the groups); serves https")
	flag.StringVar(&auth.RequestHeaderClientCAFile, "requestheader-client-ca-file", "", "trust X-Remote-User, X-Remote-Group and X-Remote-Extra-* from a front proxy whose client certificate these CAs sign; serves https")
	allowedNames := flag.String("requestheader-allowed-names", "", "comma-separated common names the front proxy's certificate may have (any when empty)")
	anonymous := flag.Bool("anonymous-auth", true, "serve requests without credentials as system:anonymous (with --token-auth-file or --client-ca-file)")
	flag.StringVar(&auth.AuthorizationMode, "authorization-mode", "AlwaysAllow", "AlwaysAllow or RBAC")
	certFile := flag.String("tls-cert-file", "", "serve https with this certificate (PEM); with --token-auth-file or --client-ca-file and no certificate, a self-signed one is made (and trusted by --kubeconfig's)")
	keyFile := flag.String("tls-private-key-file", "", "the key of --tls-cert-file (PEM)")
	flag.Parse()
	auth.DisableAnonymous = !*anonymous
	if *allowedNames != "" {
		auth.RequestHeaderAllowedNames = strings.Split(*allowedNames, ",")
	}

	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	var crds []schema.CRD
	if *crdDir != "" {
		var err error
		if crds, err = schema.LoadCRDs(*crdDir); err != nil {
			return err
		}
	}
	reg, err := server.New(server.Options{Registry: registry.Options{Logger: log}, CRDs: crds, Auth: auth})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	if auth.TokenAuthFile == "" && auth.ClientCAFile == "" && auth.RequestHeaderClientCAFile == "" && !isLoopback(ln.Addr()) {
		log.Warn("serving without authentication on a non-loopback address: anyone who can reach it can do anything", "address", ln.Addr().String())
	}
	srv := &http.Server{Handler: reg, ReadHeaderTimeout: 10 * time.Second}
	creds := server.Credentials{}
	scheme := "http"
	// Credentials go over https only: client-go sends no bearer token to
	// an http server.
	if *certFile != "" || auth.ClientCAFile != "" || auth.TokenAuthFile != "" || auth.RequestHeaderClientCAFile != "" {
		scheme = "https"
		var cert tls.Certificate
		if *certFile != "" {
			if cert, err = tls.LoadX509KeyPair(*certFile, *keyFile); err != nil {
				return err
			}
		} else if cert, creds.CertificateAuthPEM, err = server.SelfSignedCert("127.0.0.1", "::1", "localhost"); err != nil {
			return err
		}
		// The registry's authenticator verifies client certificates
		// itself, against --client-ca-file.
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequestClientCert, MinVersion: tls.VersionTLS12}
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	url := scheme + "://" + ln.Addr().String()
	if *kubeconfig != "" {
		if err := os.WriteFile(*kubeconfig, server.KubeconfigFor(url, creds), 0o600); err != nil {
			return err
		}
		fmt.Println("wrote kubeconfig to", *kubeconfig)
	}
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

func isLoopback(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return ok && t.IP.IsLoopback()
}
