package server

import (
	"context"
	"embed"
	"encoding/base64"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/kapi-dev/kapi/builtin"
	"github.com/kapi-dev/kapi/codec/protobuf"
	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/registry/admission/webhook"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

// Options configure the example server.
type Options struct {
	// Storage holds the objects; nil is a fresh in-memory store.
	Storage storage.Interface
	// Registry tunes the registry; its Storage is set from Storage.
	Registry registry.Options
	// CRDs are created through the API at start (Registry.InstallCRDs),
	// besides the embedded widgets CRD, and served as any CRD a client
	// creates (see schema.LoadCRDs).
	CRDs []schema.CRD
	// Auth says who may use the server; the zero value lets anyone do
	// anything.
	Auth Auth
	// Builtin configures the built-in kinds (pods, deployments, services,
	// …; package builtin), which the server serves besides configmaps.
	// Its Tokens (a new key when nil) sign serviceaccounts/NAME/token's
	// tokens, which the server's authenticator accepts when Auth is set.
	Builtin builtin.Options
}

// ConfigMaps is the core v1 configmaps resource: a new Resource on every
// call, with the one ConfigMap schema of the process (a registry never
// modifies a schema, and what it compiles from it is then compiled once).
func ConfigMaps() *registry.Resource {
	return &registry.Resource{
		Version: "v1", Kind: "ConfigMap", Plural: "configmaps", Singular: "configmap",
		ShortNames: []string{"cm"}, Namespaced: true,
		Protobuf: protobuf.ConfigMap,
		Schema:   configMapSchema(),
		OpenAPI:  builtin.OpenAPI("io.k8s.api.core.v1.ConfigMap"), // kube's text for kubectl explain
		Strategy: builtin.ConfigMapStrategy(),                     // kube's key and immutability rules
		Columns:  builtin.ConfigMapColumns(),
	}
}

var configMapSchema = sync.OnceValue(schema.ConfigMap)

// crds holds the CustomResourceDefinition manifests the example serves.
//
//go:embed crds/*.yaml
var crds embed.FS

// Widgets is the widgets.example.com/v1 Widget resource, read from the
// CRD manifest embedded from crds/widgets.example.com.yaml.
func Widgets() *registry.Resource {
	return registry.FromCRD(WidgetsCRD())[0]
}

// WidgetsCRD is the CRD embedded from crds/widgets.example.com.yaml,
// which New creates.
func WidgetsCRD() schema.CRD {
	b, err := crds.ReadFile("crds/widgets.example.com.yaml")
	if err != nil {
		panic(err) // embedded at build time
	}
	defs, err := schema.ParseCRDs(b)
	if err != nil || len(defs) != 1 {
		panic(fmt.Sprintf("the embedded widgets CRD: %v", err)) // checked by tests
	}
	return defs[0]
}

// LoopbackServices resolves the service of a webhook configuration's
// clientConfig.service to this host: https://127.0.0.1:<port><path> (port
// 443 unless the reference names one), where a webhook server started
// next to the example server listens. The example server uses it unless
// Options.Registry.ResolveWebhookService is set.
func LoopbackServices(_ context.Context, ref webhook.ServiceReference) (*url.URL, error) {
	port := int32(443)
	if ref.Port != nil {
		port = *ref.Port
	}
	u := &url.URL{Scheme: "https", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port)))}
	if ref.Path != nil {
		u.Path = *ref.Path
	}
	return u, nil
}

// New returns the example registry.
func New(opts Options) (*registry.Registry, error) {
	ro := opts.Registry
	ro.Storage = opts.Storage
	if opts.Builtin.Tokens == nil {
		tokens, err := builtin.NewTokens(builtin.TokenOptions{Now: ro.Now}) // the registry's clock (nil: time.Now)
		if err != nil {
			return nil, err
		}
		opts.Builtin.Tokens = tokens
	}
	if err := opts.Auth.apply(&ro, opts.Builtin.Tokens); err != nil {
		return nil, err
	}
	if ro.APIAudiences == nil { // kube's default: the service account issuer
		ro.APIAudiences = []string{opts.Builtin.Tokens.Issuer()}
	}
	if ro.Storage == nil {
		ro.Storage = memory.New(memory.Options{})
	}
	if ro.Definitions == nil {
		ro.Definitions = builtin.Definitions
	}
	if ro.ResolveWebhookService == nil {
		ro.ResolveWebhookService = LoopbackServices
	}
	r, err := registry.New(ro)
	if err != nil {
		return nil, err
	}
	if err := builtin.Register(r, opts.Builtin); err != nil {
		return nil, err
	}
	if err := r.Register(ConfigMaps()); err != nil {
		return nil, err
	}
	// The CRDs take the path a client's kubectl apply -f takes.
	if err := r.InstallCRDs(context.Background(), append([]schema.CRD{WidgetsCRD()}, opts.CRDs...)...); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// Kubeconfig returns a kubeconfig for a server at url (such as
// "http://127.0.0.1:8080"), with namespace default, for kubectl and
// client-go.
func Kubeconfig(url string) []byte {
	return KubeconfigFor(url, Credentials{})
}

// Credentials are what a kubeconfig's user presents, and the CA that
// signs an https server's certificate; each is optional.
type Credentials struct {
	Token              string
	ClientCertPEM      []byte
	ClientKeyPEM       []byte
	CertificateAuthPEM []byte
}

// KubeconfigFor is Kubeconfig with credentials.
func KubeconfigFor(url string, c Credentials) []byte {
	cluster, user := "", "{}"
	if len(c.CertificateAuthPEM) > 0 {
		cluster = "\n    certificate-authority-data: " + base64.StdEncoding.EncodeToString(c.CertificateAuthPEM)
	}
	var u []string
	if c.Token != "" {
		u = append(u, "token: "+c.Token)
	}
	if len(c.ClientCertPEM) > 0 {
		u = append(u, "client-certificate-data: "+base64.StdEncoding.EncodeToString(c.ClientCertPEM),
			"client-key-data: "+base64.StdEncoding.EncodeToString(c.ClientKeyPEM))
	}
	if len(u) > 0 {
		user = "\n    " + strings.Join(u, "\n    ")
	}
	return []byte(`apiVersion: v1
kind: Config
clusters:
- name: kapi
  cluster:
    server: ` + url + cluster + `
contexts:
- name: kapi
  context:
    cluster: kapi
    user: kapi
    namespace: default
users:
- name: kapi
  user: ` + user + `
current-context: kapi
`)
}
