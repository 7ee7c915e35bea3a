package server

import (
	"context"
	"crypto/x509"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/registry/authn"
	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

// Options configure the aggregated server.
type Options struct {
	// Storage holds the objects; nil is a fresh in-memory store (no etcd).
	Storage storage.Interface
	// RequestHeaderCA is --requestheader-client-ca-file: the CA of
	// kube-aggregator's proxy client certificate (--proxy-client-cert-file
	// of kube-apiserver). Requests it proxies name their user in
	// X-Remote-User, X-Remote-Group and X-Remote-Extra-*, trusted only
	// from a certificate this CA signs. Required.
	RequestHeaderCA *x509.CertPool
	// AllowedNames is --requestheader-allowed-names: the common names the
	// proxy's certificate may have (any when empty).
	AllowedNames []string
	// Main is the main API server, which bearer tokens (TokenReview) and
	// every authorization decision (SubjectAccessReview) are delegated
	// to. Required.
	Main Delegate
	// Logger receives the registry's logs; nil logs nothing.
	Logger *slog.Logger
	// Metrics receives the registry's measurements; nil measures nothing.
	Metrics registry.Metrics
}

// Delegate is how to reach the main API server: its URL and a client
// that trusts it and presents credentials allowed to create
// tokenreviews and subjectaccessreviews (the system:auth-delegator
// ClusterRole).
type Delegate struct {
	URL    string
	Client *http.Client
}

//go:embed kinds/*.yaml
var kinds embed.FS

// Gizmos is the fleet.example.com/v1 Gizmo resource.
func Gizmos() *registry.Resource {
	b, err := kinds.ReadFile("kinds/gizmos.fleet.example.com.yaml")
	if err != nil {
		panic(err) // embedded at build time
	}
	defs, err := schema.ParseCRDs(b)
	if err != nil || len(defs) != 1 {
		panic(fmt.Sprintf("the embedded gizmos schema: %v", err)) // checked by tests
	}
	return registry.FromCRD(defs[0])[0]
}

// GizmosManifest is the Gizmo kind's schema as a CRD manifest (for
// serving the same kind from kube-apiserver, to compare).
func GizmosManifest() []byte {
	b, _ := kinds.ReadFile("kinds/gizmos.fleet.example.com.yaml")
	return b
}

// New returns the aggregated server's registry: front-proxy
// authentication, delegated bearer tokens and authorization (the health
// endpoints excepted, as kube's delegating authorizer does), the Gizmo
// kind.
func New(opts Options) (*registry.Registry, error) {
	if opts.RequestHeaderCA == nil {
		return nil, errors.New("aggregated: Options.RequestHeaderCA is required (--requestheader-client-ca-file)")
	}
	if opts.Main.URL == "" || opts.Main.Client == nil {
		return nil, errors.New("aggregated: Options.Main is required (--authentication-kubeconfig)")
	}
	tokens, err := authn.TokenReview(authn.TokenReviewOptions{URL: opts.Main.URL, Client: opts.Main.Client})
	if err != nil {
		return nil, err
	}
	au, err := authn.New(authn.Options{
		RequestHeader: &authn.RequestHeaderOptions{ClientCA: opts.RequestHeaderCA, AllowedNames: opts.AllowedNames},
		Tokens:        tokens,
		Anonymous:     true, // kube's default: the main server's authorization decides what anonymous may do
	})
	if err != nil {
		return nil, err
	}
	sar, err := authz.SubjectAccessReview(authz.SubjectAccessReviewOptions{URL: opts.Main.URL, Client: opts.Main.Client})
	if err != nil {
		return nil, err
	}
	st := opts.Storage
	if st == nil {
		st = memory.New(memory.Options{})
	}
	reg, err := registry.New(registry.Options{
		Storage: st, Logger: opts.Logger, Metrics: opts.Metrics,
		Authenticator: au,
		Authorizer:    authz.Union(healthPaths, sar),
	})
	if err != nil {
		return nil, err
	}
	if err := reg.Register(Gizmos()); err != nil {
		reg.Close()
		return nil, err
	}
	return reg, nil
}

// healthPaths allows the health endpoints to anyone, as kube's
// delegating authorizer's AlwaysAllowPaths (kubelet probes carry no
// credentials).
var healthPaths = authz.Func(func(_ context.Context, a authz.Attributes) (authz.Decision, string, error) {
	if !a.ResourceRequest && a.Verb == "get" {
		switch a.Path {
		case "/healthz", "/livez", "/readyz":
			return authz.Allow, "", nil
		}
	}
	return authz.NoOpinion, "", nil
})
