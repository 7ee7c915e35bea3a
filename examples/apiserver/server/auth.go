package server

import (
	"crypto/x509"
	"fmt"
	"os"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/registry/authn"
	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/authz/rbac"
	"github.com/kapi-dev/kapi/registry/request"
)

// Auth says who may use the server, with kube-apiserver's flags' names
// and meanings. The zero value is the example's default: no
// authentication, every request served as system:anonymous, and
// AlwaysAllow — anyone who can reach the server can do anything, which is
// why the example listens on loopback unless told otherwise.
type Auth struct {
	// TokenAuthFile is --token-auth-file: static bearer tokens, one
	// "token,user,uid,\"group1,group2\"" line each.
	TokenAuthFile string
	// ClientCAFile is --client-ca-file: client certificates signed by
	// these CAs authenticate as their common name, in their
	// organizations' groups (the server must serve TLS and ask for
	// client certificates).
	ClientCAFile string
	// RequestHeaderClientCAFile is --requestheader-client-ca-file: a
	// front proxy (kube-aggregator, say) whose client certificate chains
	// to these CAs names the user in X-Remote-User, X-Remote-Group and
	// X-Remote-Extra-* headers, trusted from it alone.
	RequestHeaderClientCAFile string
	// RequestHeaderAllowedNames is --requestheader-allowed-names: the
	// common names the front proxy's certificate may have (any when
	// empty).
	RequestHeaderAllowedNames []string
	// DisableAnonymous is --anonymous-auth=false: a request without
	// credentials is refused with 401 instead of served as
	// system:anonymous.
	DisableAnonymous bool
	// AuthorizationMode is --authorization-mode: AlwaysAllow (the
	// default) or RBAC (members of system:masters may do anything; others
	// what the stored roles and bindings grant, starting from kube's
	// defaults: discovery, health and the self reviews for every
	// authenticated user).
	AuthorizationMode string
}

// enabled tells whether a authenticates anyone.
func (a Auth) enabled() bool {
	return a.TokenAuthFile != "" || a.ClientCAFile != "" || a.RequestHeaderClientCAFile != ""
}

// apply sets the registry options a asks for.
func (a Auth) apply(ro *registry.Options, serviceAccounts authn.TokenAuthenticator) error {
	switch a.AuthorizationMode {
	case "", "AlwaysAllow":
		ro.Authorizer = authz.AlwaysAllow
	case "RBAC":
		z := rbac.New()
		ro.RBAC = z
		ro.Authorizer = authz.Union(authz.Privileged(request.SystemPrivileged), z)
	default:
		return fmt.Errorf("--authorization-mode=%s: want AlwaysAllow or RBAC", a.AuthorizationMode)
	}
	if !a.enabled() {
		if a.DisableAnonymous {
			return fmt.Errorf("--anonymous-auth=false needs --token-auth-file, --client-ca-file or --requestheader-client-ca-file: nobody could use the server")
		}
		return nil
	}
	opts := authn.Options{Anonymous: !a.DisableAnonymous}
	if a.TokenAuthFile != "" {
		tokens, err := authn.LoadTokenFile(a.TokenAuthFile)
		if err != nil {
			return err
		}
		opts.Tokens = tokens
	}
	if serviceAccounts != nil {
		if opts.Tokens == nil {
			opts.Tokens = serviceAccounts
		} else {
			opts.Tokens = authn.UnionTokens(opts.Tokens, serviceAccounts)
		}
	}
	if a.ClientCAFile != "" {
		pool, err := certPool("--client-ca-file", a.ClientCAFile)
		if err != nil {
			return err
		}
		opts.ClientCert = &authn.ClientCertOptions{Roots: pool}
	}
	if a.RequestHeaderClientCAFile != "" {
		pool, err := certPool("--requestheader-client-ca-file", a.RequestHeaderClientCAFile)
		if err != nil {
			return err
		}
		opts.RequestHeader = &authn.RequestHeaderOptions{ClientCA: pool, AllowedNames: a.RequestHeaderAllowedNames}
	}
	au, err := authn.New(opts)
	if err != nil {
		return err
	}
	ro.Authenticator = au
	return nil
}

// certPool reads the PEM certificates of file, named by flag in errors.
func certPool(flag, file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s %s: no PEM certificate in it", flag, file)
	}
	return pool, nil
}
