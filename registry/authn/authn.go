package authn

import (
	"net/http"

	"github.com/kapi-dev/kapi/registry/request"
)

// Authenticator finds the user of a request. ok is false when the request
// carries no credentials this authenticator reads (another may); err is
// set when it carries credentials that are not valid (the request is
// refused with 401, as kube does, whatever the other authenticators say).
type Authenticator interface {
	Authenticate(req *http.Request) (u *request.User, ok bool, err error)
}

// Func adapts a function to Authenticator.
type Func func(req *http.Request) (*request.User, bool, error)

// Authenticate calls f.
func (f Func) Authenticate(req *http.Request) (*request.User, bool, error) { return f(req) }
