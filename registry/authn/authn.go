package authn

import (
	"context"
	"errors"
	"net/http"

	"github.com/kapi-dev/kapi/registry/request"
)

// Authenticator finds the user of a request. ok is false when the request
// carries no credentials this authenticator reads (another may); err is
// set when it carries credentials that are not valid (the request is
// refused with 401, as kube does, whatever the other authenticators say).
//
// An authenticator may remove from the request the headers it read the
// credentials from once it accepts them (kube does, so no later stage is
// tempted to use them): call it on the request the later stages see.
type Authenticator interface {
	Authenticate(req *http.Request) (u *request.User, ok bool, err error)
}

// Func adapts a function to Authenticator.
type Func func(req *http.Request) (*request.User, bool, error)

// Authenticate calls f.
func (f Func) Authenticate(req *http.Request) (*request.User, bool, error) { return f(req) }

// TokenAuthenticator finds the user a bearer token stands for (kube's
// authenticator.Token): BearerToken reads the token from a request, and a
// TokenReview asks about one directly. ok is false for a token it does
// not know; err is set when it could not decide (a webhook that did not
// answer) or the token is malformed.
type TokenAuthenticator interface {
	AuthenticateToken(ctx context.Context, token string) (u *request.User, ok bool, err error)
}

// TokenFunc adapts a function to TokenAuthenticator.
type TokenFunc func(ctx context.Context, token string) (*request.User, bool, error)

// AuthenticateToken calls f.
func (f TokenFunc) AuthenticateToken(ctx context.Context, token string) (*request.User, bool, error) {
	return f(ctx, token)
}

// ErrInvalidBearerToken is BearerToken's error for a token that no
// TokenAuthenticator knows (kube's "invalid bearer token").
var ErrInvalidBearerToken = errors.New("authn: invalid bearer token")

// CredentialIDKey is the key in User.Extra under which ClientCert records
// the certificate it authenticated ("X509SHA256=" and the hex SHA-256 of
// the certificate's DER), as kube does for audit logs.
const CredentialIDKey = "authentication.kubernetes.io/credential-id"
