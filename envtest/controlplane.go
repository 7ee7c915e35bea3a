package envtest

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/kapi-dev/kapi/builtin"
	"github.com/kapi-dev/kapi/cel"
	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/registry/authn"
	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/authz/rbac"
	"github.com/kapi-dev/kapi/registry/request"
	"github.com/kapi-dev/kapi/storage/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ControlPlane is the API server tests talk to: envtest's ControlPlane,
// with the parts tests reach into (APIServer.SecureServing,
// APIServer.Configure, AddUser, APIURL, GetAPIServer).
type ControlPlane struct {
	APIServer *APIServer
	// Etcd is kept for envtest's fields; kapi stores in memory and
	// starts no etcd.
	Etcd *Etcd
	// KubectlPath is the kubectl binary KubeCtl and
	// AuthenticatedUser.Kubectl run; empty, it is found as KubeCtl.Run
	// says.
	KubectlPath string

	defaultUser *AuthenticatedUser // KubeCtl's
}

// Start starts the API server.
func (f *ControlPlane) Start() error { return f.GetAPIServer().Start() }

// Stop stops the API server.
func (f *ControlPlane) Stop() error {
	if f.APIServer == nil {
		return nil
	}
	return f.APIServer.Stop()
}

// APIURL is the URL clients reach the API server at.
//
// Deprecated: use AddUser instead, or APIServer.SecureServing.URL, as
// envtest says.
func (f *ControlPlane) APIURL() *url.URL { return f.GetAPIServer().SecureServing.URL("https", "/") }

// RESTClientConfig is a rest.Config with no credentials for the API
// server (requests are system:anonymous).
//
// Deprecated: use AddUser and AuthenticatedUser.Config, as envtest says.
func (f *ControlPlane) RESTClientConfig() (*rest.Config, error) {
	api := f.GetAPIServer()
	if !api.running() {
		return nil, errors.New("kapi/envtest: the API server has not been started")
	}
	if api.InProcess {
		return &rest.Config{Host: inProcessHost, Transport: api.transport}, nil
	}
	return &rest.Config{Host: f.APIURL().String(), TLSClientConfig: rest.TLSClientConfig{CAData: api.SecureServing.CA}}, nil
}

// AddUser provisions user with APIServer.SecureServing.Authn (a bearer
// token by default, a client certificate with NewCertAuthn); callable before and after Start, the user's Config
// usable after Start.
func (f *ControlPlane) AddUser(user User, baseConfig *rest.Config) (*AuthenticatedUser, error) {
	api := f.GetAPIServer()
	if api.SecureServing.Authn == nil {
		api.SecureServing.Authn = NewTokenAuthn()
	}
	if baseConfig == nil {
		baseConfig = &rest.Config{}
	}
	cfg, err := api.SecureServing.AddUser(user, baseConfig)
	if err != nil {
		return nil, err
	}
	return &AuthenticatedUser{cfg: cfg, plane: f}, nil
}

// GetAPIServer returns APIServer, made if nil.
func (f *ControlPlane) GetAPIServer() *APIServer {
	if f.APIServer == nil {
		f.APIServer = &APIServer{}
	}
	return f.APIServer
}

// AuthenticatedUser is a provisioned user.
type AuthenticatedUser struct {
	cfg      *rest.Config
	complete bool
	plane    *ControlPlane
	kubectl  *KubeCtl
}

// Config is a rest.Config that authenticates as the user. It panics
// before the API server is started, as envtest's does.
func (u *AuthenticatedUser) Config() *rest.Config {
	if u.complete {
		return u.cfg
	}
	api := u.plane.GetAPIServer()
	if !api.running() {
		panic("the API server has not yet been started, please do that before accessing connection details")
	}
	if api.InProcess {
		u.cfg.Host = inProcessHost
		if err := inProcessCert(u.cfg, api.transport); err != nil {
			panic(fmt.Sprintf("kapi/envtest: the user's client certificate: %v", err))
		}
	} else {
		u.cfg.CAData = api.SecureServing.CA
		u.cfg.Host = api.SecureServing.URL("https", "/").String()
	}
	u.complete = true
	return u.cfg
}

// KubeConfig is a kubeconfig equivalent to Config.
func (u *AuthenticatedUser) KubeConfig() ([]byte, error) { return KubeConfigFromREST(u.Config()) }

// SecureServing is how the API server serves: the address (a free
// loopback port unless set), the CA of its certificate (set by Start)
// and the authenticator users are provisioned with.
type SecureServing struct {
	ListenAddr
	// CA is the PEM certificate that signs the serving certificate;
	// read-only, set by Start.
	CA []byte
	// Authn provisions users; default NewTokenAuthn().
	Authn
}

// Authn provisions users: envtest's interface. Configure, Start,
// AddUser (any number of times), Stop, in that order; AddUser may also
// be called before Start.
type Authn interface {
	Configure(workDir string, args *Arguments) error
	Start() error
	AddUser(user User, baseCfg *rest.Config) (*rest.Config, error)
	Stop() error
}

// APIServer is the kapi API server: envtest's APIServer fields. Those that
// configure a kube-apiserver process (Path, Args, CertDir, EtcdURL, URL,
// InsecureServing, SecurePort) are accepted and unused; of Configure's
// flags, authorization-mode is read (RBAC, the default, or AlwaysAllow).
type APIServer struct {
	// Deprecated: use SecureServing, as envtest says.
	URL *url.URL
	// Deprecated: use SecureServing, as envtest says.
	SecurePort    int
	SecureServing SecureServing
	// Deprecated: does not work with Kubernetes 1.20 and above, as
	// envtest says.
	InsecureServing *ListenAddr
	Path            string
	// Deprecated: use Configure, as envtest says.
	Args    []string
	CertDir string
	EtcdURL *url.URL
	// StartTimeout and StopTimeout bound Start and Stop.
	StartTimeout time.Duration
	StopTimeout  time.Duration
	// Out is unused; Err, when set, receives the server's logs (text).
	Out io.Writer
	Err io.Writer

	// InProcess serves clients without a socket: Start opens no listener
	// and makes no certificate, and the users' configs carry a transport
	// that calls the server's handler in-process (watches stream as over
	// a connection). Their Host is a placeholder URL, so a kubeconfig made
	// from them serves no other process. Not in envtest.
	InProcess bool
	// NoGarbageCollector turns kapi's garbage collector off: deleting an
	// owner leaves its dependents, as kube-apiserver alone (envtest's)
	// does. Not in envtest.
	NoGarbageCollector bool

	args      *Arguments
	srv       *http.Server
	reg       *registry.Registry
	store     *memory.Store
	done      chan struct{} // closed when Serve returns
	transport *inProcess    // serves InProcess clients
	faults    faults
	log       requestLog
	dir       string // the kubeconfigs of Kubectl, removed at Stop
}

// workDir is a temporary directory of the server's, made at the first
// call and removed at Stop.
func (s *APIServer) workDir() (string, error) {
	if s.dir == "" {
		d, err := os.MkdirTemp("", "kapi-envtest-")
		if err != nil {
			return "", err
		}
		s.dir = d
	}
	return s.dir, nil
}

// removeWorkDir removes workDir's directory.
func (s *APIServer) removeWorkDir() error {
	if s.dir == "" {
		return nil
	}
	err := os.RemoveAll(s.dir)
	s.dir = ""
	return err
}

func (s *APIServer) running() bool { return s.reg != nil }

// InjectFault puts f in force until Remove (or for f.Count requests);
// faults are matched in the order injected, the first that matches takes
// the request. Callable before and after Start.
func (s *APIServer) InjectFault(f Fault) (*Injection, error) { return s.faults.add(f) }

// Requests is every request served since Start (or ResetRequests), in
// arrival order; one in flight has Code 0.
func (s *APIServer) Requests() []Request { return s.log.snapshot() }

// ResetRequests empties the request log.
func (s *APIServer) ResetRequests() { s.log.reset() }

// Configure returns the flags to start the server with; see APIServer.
func (s *APIServer) Configure() *Arguments {
	if s.args == nil {
		s.args = EmptyArguments()
	}
	return s.args
}

// Start serves a new registry on the in-memory store over HTTPS.
func (s *APIServer) Start() error {
	if s.running() {
		return errors.New("kapi/envtest: the API server is already started")
	}
	if s.SecureServing.Authn == nil {
		s.SecureServing.Authn = NewTokenAuthn()
	}
	if err := s.SecureServing.Configure("", s.Configure()); err != nil {
		return err
	}
	ao := authn.Options{Anonymous: true}
	var tokens *TokenAuthn
	clientAuth := tls.NoClientCert
	switch a := s.SecureServing.Authn.(type) {
	case *TokenAuthn:
		tokens, ao.Tokens = a, a
	case *CertAuthn:
		ao.ClientCert = &authn.ClientCertOptions{Roots: a.roots()}
		clientAuth = tls.RequestClientCert // verified by the authenticator
	default:
		return fmt.Errorf("kapi/envtest: SecureServing.Authn is %T; kapi serves bearer tokens (NewTokenAuthn) and client certificates (NewCertAuthn)", s.SecureServing.Authn)
	}
	if err := s.SecureServing.Start(); err != nil {
		return err
	}
	// Webhooks' matchConditions are CEL; a service reference resolves to
	// loopback (envtest's configurations use URLs).
	ro := registry.Options{CEL: cel.Compile, WebhookConditions: cel.CompileMatchConditions,
		ResolveWebhookService: server.LoopbackServices, DisableGarbageCollection: s.NoGarbageCollector}
	errorLog := log.New(io.Discard, "", 0) // TLS handshakes cut short by a test's end
	if s.Err != nil {
		ro.Logger = slog.New(slog.NewTextHandler(s.Err, nil))
		errorLog = log.New(s.Err, "kapi/envtest: ", log.LstdFlags)
	}
	au, err := authn.New(ao)
	if err != nil {
		return err
	}
	ro.Authenticator = au
	switch mode := s.Configure().Get("authorization-mode").Get([]string{"RBAC"}); {
	case len(mode) == 1 && mode[0] == "RBAC":
		z := rbac.New()
		ro.RBAC = z
		ro.Authorizer = authz.Union(authz.Privileged(request.SystemPrivileged), z)
	case len(mode) == 1 && mode[0] == "AlwaysAllow":
		ro.Authorizer = authz.AlwaysAllow
	default:
		return fmt.Errorf("kapi/envtest: --authorization-mode=%v: want RBAC or AlwaysAllow", mode)
	}
	store := memory.New(memory.Options{})
	ro.Storage = store
	reg, err := registry.New(ro)
	if err != nil {
		store.Close()
		return err
	}
	// The built-in kinds kapi serves besides namespaces and the RBAC and
	// review kinds (registry.New's): configmaps and package builtin's.
	if err := builtin.Register(reg, builtin.Options{}); err != nil {
		reg.Close()
		store.Close()
		return err
	}
	if err := reg.Register(server.ConfigMaps()); err != nil {
		reg.Close()
		store.Close()
		return err
	}
	s.log.reset()
	h := &front{next: reg, tokens: tokens, faults: &s.faults, log: &s.log}
	if s.InProcess {
		if s.transport == nil {
			s.transport = &inProcess{}
		}
		s.transport.open(h)
		s.reg, s.store = reg, store
		return nil
	}
	host := s.SecureServing.Address
	if host == "" {
		host = "127.0.0.1"
	}
	port := s.SecureServing.Port
	if port == "" {
		port = "0"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		reg.Close()
		store.Close()
		return err
	}
	cert, caPEM, err := server.SelfSignedCert(host, "localhost")
	if err != nil {
		ln.Close()
		reg.Close()
		store.Close()
		return err
	}
	addr := ln.Addr().(*net.TCPAddr)
	s.SecureServing.Address, s.SecureServing.Port = host, strconv.Itoa(addr.Port)
	s.SecureServing.CA = caPEM
	s.srv = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}, ClientAuth: clientAuth},
		ErrorLog:          errorLog,
	}
	s.reg, s.store, s.done = reg, store, make(chan struct{})
	go func() {
		defer close(s.done)
		_ = s.srv.ServeTLS(ln, "", "")
	}()
	return nil
}

// Stop closes the listener and every connection (watches end), waits
// for requests in flight up to StopTimeout, and stops the registry's and
// the store's background work.
func (s *APIServer) Stop() error {
	if !s.running() {
		return nil
	}
	if s.srv == nil { // in-process
		s.transport.close()
		err := errors.Join(s.reg.Close(), s.SecureServing.Stop(), s.removeWorkDir())
		s.store.Close()
		s.reg, s.store = nil, nil
		return err
	}
	timeout := s.StopTimeout
	if timeout <= 0 {
		timeout = defaultStopTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// Watches never end on their own: close them rather than wait.
	err := s.srv.Close()
	select {
	case <-s.done:
	case <-ctx.Done():
		err = errors.Join(err, fmt.Errorf("kapi/envtest: the server did not stop within %s", timeout))
	}
	err = errors.Join(err, s.reg.Close(), s.SecureServing.Stop(), s.removeWorkDir())
	s.store.Close()
	s.srv, s.reg, s.store = nil, nil, nil
	return err
}

// Etcd is envtest's Etcd, kept for its fields: kapi stores in memory and
// starts no etcd.
type Etcd struct {
	URL  *url.URL
	Path string
	// Deprecated: use Configure, as envtest says.
	Args         []string
	DataDir      string
	StartTimeout time.Duration
	StopTimeout  time.Duration
	Out          io.Writer
	Err          io.Writer
	args         *Arguments
}

// Configure returns etcd's flags; unused.
func (e *Etcd) Configure() *Arguments {
	if e.args == nil {
		e.args = EmptyArguments()
	}
	return e.args
}

// Start does nothing: there is no etcd.
func (e *Etcd) Start() error { return nil }

// Stop does nothing: there is no etcd.
func (e *Etcd) Stop() error { return nil }

// TokenAuthn provisions users as bearer tokens (a random token each),
// which the API server authenticates: the default SecureServing.Authn.
// It is safe for concurrent use.
type TokenAuthn struct {
	mu    sync.RWMutex
	users map[string]request.User
}

var (
	_ Authn                    = (*TokenAuthn)(nil)
	_ authn.TokenAuthenticator = (*TokenAuthn)(nil)
)

// NewTokenAuthn returns a TokenAuthn with no users.
func NewTokenAuthn() *TokenAuthn { return &TokenAuthn{users: map[string]request.User{}} }

// Configure does nothing: the tokens live in memory.
func (a *TokenAuthn) Configure(string, *Arguments) error { return nil }

// Start does nothing.
func (a *TokenAuthn) Start() error { return nil }

// Stop does nothing: the tokens stay valid for a restarted server.
func (a *TokenAuthn) Stop() error { return nil }

// AddUser provisions user: a copy of baseCfg with a new bearer token.
func (a *TokenAuthn) AddUser(user User, baseCfg *rest.Config) (*rest.Config, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	token := hex.EncodeToString(b)
	a.mu.Lock()
	a.users[token] = request.User{Name: user.Name, Groups: append([]string(nil), user.Groups...)}
	a.mu.Unlock()
	cfg := rest.CopyConfig(baseCfg)
	cfg.BearerToken = token
	return cfg, nil
}

// AuthenticateToken is the user token stands for.
func (a *TokenAuthn) AuthenticateToken(_ context.Context, token string) (*request.User, bool, error) {
	a.mu.RLock()
	u, ok := a.users[token]
	a.mu.RUnlock()
	if !ok {
		return nil, false, nil
	}
	u.Groups = append([]string(nil), u.Groups...)
	return &u, true, nil
}

// KubeConfigFromREST is a kubeconfig equivalent to cfg: its server, CA,
// client certificate and bearer token.
func KubeConfigFromREST(cfg *rest.Config) ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.CAData,
		InsecureSkipTLSVerify:    cfg.Insecure,
	}
	kc.AuthInfos["envtest"] = &clientcmdapi.AuthInfo{
		Token:                 cfg.BearerToken,
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
	}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "envtest"}
	kc.CurrentContext = "envtest"
	return clientcmd.Write(*kc)
}
