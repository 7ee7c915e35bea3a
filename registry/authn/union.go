package authn

import (
	"context"
	"errors"
	"net/http"

	"github.com/kapi-dev/kapi/registry/request"
)

// Anonymous authenticates every request as the user system:anonymous in
// the group system:unauthenticated (kube's --anonymous-auth). Use it
// last, behind AnonymousFallback, so that invalid credentials still get
// a 401.
func Anonymous() Authenticator {
	return Func(func(*http.Request) (*request.User, bool, error) {
		return &request.User{Name: request.Anonymous, Groups: []string{request.AllUnauthenticated}}, true, nil
	})
}

// Union tries auths in turn; the first that accepts the request wins,
// even when one before it returned an error (a client certificate that
// is not the front proxy's may be a user's). When none accepts it, the
// errors they returned, joined, are the error (401), and with none the
// request is not ok. This is kube's union.New.
func Union(auths ...Authenticator) Authenticator {
	if len(auths) == 1 {
		return auths[0]
	}
	return Func(func(req *http.Request) (*request.User, bool, error) {
		var errs []error
		for _, a := range auths {
			u, ok, err := a.Authenticate(req)
			if ok && err == nil {
				return u, true, nil
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
		return nil, false, joinErrors(errs)
	})
}

// joinErrors is nil for none, the error itself for one, else
// errors.Join's.
func joinErrors(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// UnionTokens tries ts in turn for a token; the first that knows it
// wins. When none does, the errors they returned, joined, are the error,
// and with none the token is not ok (kube's token union).
func UnionTokens(ts ...TokenAuthenticator) TokenAuthenticator {
	if len(ts) == 1 {
		return ts[0]
	}
	return TokenFunc(func(ctx context.Context, token string) (*request.User, bool, error) {
		var errs []error
		for _, t := range ts {
			u, ok, err := t.AuthenticateToken(ctx, token)
			if ok && err == nil {
				return u, true, nil
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
		return nil, false, joinErrors(errs)
	})
}

// ErrNoUser is WithAuthenticatedGroup's error when the authenticator it
// wraps accepts a request but returns no user (a bug in that
// authenticator; the request gets a 401 rather than a panic).
var ErrNoUser = errors.New("authn: an authenticator accepted a request but returned no user")

// WithAuthenticatedGroup adds the group system:authenticated to the
// users a finds, except system:anonymous and users already in
// system:authenticated or system:unauthenticated (kube's
// group.NewAuthenticatedGroupAdder). The user a returns is not changed: a
// copy is.
func WithAuthenticatedGroup(a Authenticator) Authenticator {
	return Func(func(req *http.Request) (*request.User, bool, error) {
		u, ok, err := a.Authenticate(req)
		if err != nil || !ok {
			return nil, false, err
		}
		if u == nil {
			return nil, false, ErrNoUser
		}
		if u.Name == request.Anonymous || u.InGroup(request.AllAuthenticated) || u.InGroup(request.AllUnauthenticated) {
			return u, true, nil
		}
		c := *u
		c.Groups = make([]string, 0, len(u.Groups)+1)
		c.Groups = append(append(c.Groups, u.Groups...), request.AllAuthenticated)
		return &c, true, nil
	})
}

// AnonymousFallback authenticates with a, and a request a finds no
// credentials in as Anonymous; a request a returns an error for stays
// an error (401), as in kube's union.NewFailOnError(a, anonymous).
func AnonymousFallback(a Authenticator) Authenticator {
	anon := Anonymous()
	return Func(func(req *http.Request) (*request.User, bool, error) {
		u, ok, err := a.Authenticate(req)
		if err != nil {
			return nil, false, err
		}
		if ok {
			return u, true, nil
		}
		return anon.Authenticate(req)
	})
}

// Options configure New; each authenticator is off when its field is
// nil.
type Options struct {
	// RequestHeader authenticates requests from a front proxy; tried
	// first.
	RequestHeader *RequestHeaderOptions
	// ClientCert authenticates requests by their client certificate.
	ClientCert *ClientCertOptions
	// Tokens authenticates bearer tokens, of the Authorization header
	// (BearerToken) or of a WebSocket subprotocol (WebSocketProtocol):
	// Tokens, or UnionTokens of several.
	Tokens TokenAuthenticator
	// Authenticators are the program's own, tried after the above.
	Authenticators []Authenticator
	// Anonymous makes a request with no credentials any authenticator
	// reads system:anonymous (kube's --anonymous-auth).
	Anonymous bool
}

// New returns kube-apiserver's authentication chain of opts:
//
//	AnonymousFallback(WithAuthenticatedGroup(Union(
//		RequestHeader, ClientCert, BearerToken, WebSocketProtocol, Authenticators...)))
//
// The first authenticator that accepts a request wins, and its user is
// also in system:authenticated. When none does, any error one returned
// is the result (401: a bad token is refused even with Anonymous on);
// only a request with no credentials they read is anonymous, when
// Anonymous is set, and else not ok.
func New(opts Options) (Authenticator, error) {
	var auths []Authenticator
	if opts.RequestHeader != nil {
		a, err := RequestHeader(*opts.RequestHeader)
		if err != nil {
			return nil, err
		}
		auths = append(auths, a)
	}
	if opts.ClientCert != nil {
		a, err := ClientCert(*opts.ClientCert)
		if err != nil {
			return nil, err
		}
		auths = append(auths, a)
	}
	if opts.Tokens != nil {
		auths = append(auths, BearerToken(opts.Tokens), WebSocketProtocol(opts.Tokens))
	}
	auths = append(auths, opts.Authenticators...)
	if len(auths) == 0 {
		if opts.Anonymous {
			return Anonymous(), nil
		}
		return Func(func(*http.Request) (*request.User, bool, error) { return nil, false, nil }), nil
	}
	a := WithAuthenticatedGroup(Union(auths...))
	if opts.Anonymous {
		a = AnonymousFallback(a)
	}
	return a, nil
}
