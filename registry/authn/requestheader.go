package authn

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/registry/request"
)

// RequestHeaderOptions configure RequestHeader: kube-apiserver's
// --requestheader-* flags.
type RequestHeaderOptions struct {
	// ClientCA are the certificate authorities a front proxy's client
	// certificate must chain to (--requestheader-client-ca-file).
	// Required.
	ClientCA *x509.CertPool
	// AllowedNames are the common names a front proxy's certificate may
	// have (--requestheader-allowed-names); empty: any.
	AllowedNames []string
	// UsernameHeaders are the headers read, in turn, for the user's name;
	// the first with a value wins. Default: X-Remote-User.
	UsernameHeaders []string
	// UIDHeaders are the headers read, in turn, for the user's UID.
	// Default: none (kube's --requestheader-uid-headers has none).
	UIDHeaders []string
	// GroupHeaders are the headers whose values, all of them, are the
	// user's groups. Default: X-Remote-Group.
	GroupHeaders []string
	// ExtraHeaderPrefixes are the prefixes of the headers that make the
	// user's Extra. Default: X-Remote-Extra-.
	ExtraHeaderPrefixes []string
}

// ErrEmptyHeaderName is RequestHeader's error for a header name or prefix
// that is empty or only spaces.
var ErrEmptyHeaderName = errors.New("authn: empty header name")

// ProxyNameError is the error of a front proxy's certificate that
// verifies but whose common name is not one of the allowed names.
type ProxyNameError struct{ CommonName string }

func (e *ProxyNameError) Error() string {
	return fmt.Sprintf("authn: x509: subject with cn=%s is not in the allowed list", e.CommonName)
}

// RequestHeader authenticates a request a front proxy (an authenticating
// proxy, or kube-apiserver forwarding to an aggregated API server) sent
// on behalf of a user, as kube's requestheader authenticator: the proxy
// proves itself with a client certificate and names the user in headers.
//
// A request without a client certificate is not ok. One whose
// certificate does not verify against opts.ClientCA for client
// authentication is a *CertificateError, and one whose certificate's
// common name is not in opts.AllowedNames (when set) a *ProxyNameError;
// both are 401 unless another authenticator of a Union takes the request
// (a client certificate for ClientCert is not the front proxy's). From a
// trusted proxy:
//
//	X-Remote-User: alice                         Name "alice" (no name: not ok)
//	X-Remote-Group: dev                          Groups ["dev", "ops"]
//	X-Remote-Group: ops
//	X-Remote-Extra-Acme.com%2Fproject: x         Extra["acme.com/project"] = ["x"]
//
// An extra's key is the rest of the header's name after the prefix,
// lower-cased, then %-unescaped (kept as it is when it does not
// unescape). On success every header of the options is removed from the
// request, so no later stage reads them.
func RequestHeader(opts RequestHeaderOptions) (Authenticator, error) {
	if opts.ClientCA == nil {
		return nil, ErrNoRoots
	}
	h := &headerAuth{ca: opts.ClientCA, allowed: slices.Clone(opts.AllowedNames)}
	var err error
	if h.names, err = headerNames(opts.UsernameHeaders, "X-Remote-User"); err != nil {
		return nil, err
	}
	if h.uids, err = headerNames(opts.UIDHeaders, ""); err != nil {
		return nil, err
	}
	if h.groups, err = headerNames(opts.GroupHeaders, "X-Remote-Group"); err != nil {
		return nil, err
	}
	if h.prefixes, err = headerNames(opts.ExtraHeaderPrefixes, "X-Remote-Extra-"); err != nil {
		return nil, err
	}
	return h, nil
}

// headerNames are names trimmed of spaces and canonicalized, or def when
// names is empty.
func headerNames(names []string, def string) ([]string, error) {
	if len(names) == 0 {
		if def == "" {
			return nil, nil
		}
		return []string{def}, nil
	}
	out := make([]string, len(names))
	for i, n := range names {
		t := strings.TrimSpace(n)
		if t == "" {
			return nil, fmt.Errorf("%w: %q", ErrEmptyHeaderName, n)
		}
		out[i] = http.CanonicalHeaderKey(t)
	}
	return out, nil
}

type headerAuth struct {
	ca                            *x509.CertPool
	allowed                       []string
	names, uids, groups, prefixes []string
}

func (h *headerAuth) Authenticate(req *http.Request) (*request.User, bool, error) {
	leaf, err := verifyPeer(req, h.ca)
	if leaf == nil || err != nil {
		return nil, false, err
	}
	if len(h.allowed) > 0 && !slices.Contains(h.allowed, leaf.Subject.CommonName) {
		return nil, false, &ProxyNameError{CommonName: leaf.Subject.CommonName}
	}
	name := firstValue(req.Header, h.names)
	if name == "" {
		return nil, false, nil
	}
	u := &request.User{
		Name:  name,
		UID:   firstValue(req.Header, h.uids),
		Extra: extras(req.Header, h.prefixes),
	}
	for _, g := range h.groups {
		for _, v := range req.Header[g] {
			if v != "" {
				u.Groups = append(u.Groups, v)
			}
		}
	}
	for _, hs := range [][]string{h.names, h.uids, h.groups} {
		for _, n := range hs {
			req.Header.Del(n)
		}
	}
	for k := range req.Header {
		if hasPrefixFold(k, h.prefixes) {
			delete(req.Header, k)
		}
	}
	return u, true, nil
}

// firstValue is the first non-empty value of the headers names, in turn.
func firstValue(h http.Header, names []string) string {
	for _, n := range names {
		if v := h.Get(n); v != "" {
			return v
		}
	}
	return ""
}

// hasPrefixFold reports whether the header name k starts with one of
// prefixes, case-insensitively.
func hasPrefixFold(k string, prefixes []string) bool {
	for _, p := range prefixes {
		if len(k) >= len(p) && strings.EqualFold(k[:len(p)], p) {
			return true
		}
	}
	return false
}

// extras are the user's Extra from the headers starting with one of
// prefixes: for each prefix in turn, the headers in name order (kube
// ranges over the header map), the values appended under extraKey of the
// rest of the name.
func extras(h http.Header, prefixes []string) map[string][]string {
	var out map[string][]string
	var keys []string
	for _, p := range prefixes {
		keys = keys[:0]
		for k := range h {
			if hasPrefixFold(k, []string{p}) {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			if out == nil {
				out = make(map[string][]string)
			}
			key := extraKey(k[len(p):])
			out[key] = append(out[key], h[k]...)
		}
	}
	return out
}

// extraKey is the Extra key a header name's rest after the prefix
// stands for: lower-cased, then %-unescaped as a URL path segment, or
// kept lower-cased when it does not unescape (kube records malformed
// keys rather than dropping them).
func extraKey(s string) string {
	s = strings.ToLower(s)
	if k, err := url.PathUnescape(s); err == nil {
		return k
	}
	return s
}
