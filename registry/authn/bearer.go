package authn

import (
	"net/http"
	"strings"

	"github.com/kapi-dev/kapi/registry/request"
)

// BearerToken authenticates the token of a request's "Authorization:
// Bearer <token>" header with t, as kube's bearertoken authenticator:
//
//	Authorization: Bearer abc       token "abc"
//	Authorization: bEaReR abc       token "abc" (the scheme is case-insensitive)
//	Authorization: Bearer abc def   token "abc" (what follows a second space is ignored)
//	Authorization: Bearer  abc      no token (an empty one before the second space): not ok
//	Authorization: Basic abc        not ok (another scheme)
//
// A token t does not know is ErrInvalidBearerToken (401), unless t
// returns an error of its own. On success the Authorization header is
// removed from the request.
func BearerToken(t TokenAuthenticator) Authenticator {
	return Func(func(req *http.Request) (*request.User, bool, error) {
		token, ok := parseBearer(req.Header.Get("Authorization"))
		if !ok {
			return nil, false, nil
		}
		u, ok, err := t.AuthenticateToken(req.Context(), token)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			return nil, false, ErrInvalidBearerToken
		}
		req.Header.Del("Authorization")
		return u, true, nil
	})
}

// parseBearer returns the token of an Authorization header's value by
// kube's rules (see BearerToken); ok is false when there is none.
func parseBearer(h string) (token string, ok bool) {
	h = strings.TrimSpace(h)
	scheme, rest, found := strings.Cut(h, " ")
	if !found || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token, _, _ = strings.Cut(rest, " ")
	return token, token != ""
}
