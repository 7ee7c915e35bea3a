package authn

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kapi-dev/kapi/registry/internal/review"
	"github.com/kapi-dev/kapi/registry/request"
)

// TokenReviewOptions configure TokenReview: kube's delegating
// authenticator (an aggregated API server's --authentication-kubeconfig).
type TokenReviewOptions struct {
	// URL is the main API server's, such as "https://10.0.0.1:6443".
	// Required.
	URL string
	// Client sends the reviews: its transport trusts the main server and
	// presents credentials allowed to create tokenreviews (kube's
	// system:auth-delegator ClusterRole). Required.
	Client *http.Client
	// CacheTTL is how long an answer is reused (default 10 s, as kube's
	// delegating authenticator); negative caches nothing.
	CacheTTL time.Duration
	// Timeout bounds one review (default 10 s).
	Timeout time.Duration
}

// ErrTokenReview is the error of a TokenReview that could not decide: the
// main server did not answer, or answered with an error.
var ErrTokenReview = errors.New("authn: token review")

// TokenReview is a TokenAuthenticator that asks the main API server: it
// POSTs an authentication.k8s.io/v1 TokenReview with the token and takes
// the user of the answer, as kube's delegating authenticator does.
//
//	{"spec":{"token":"abc"}}  →  {"status":{"authenticated":true,"user":{"username":"alice","groups":["dev"]}}}
//
// An answer (authenticated or not) is cached for CacheTTL by the token's
// SHA-256, so a client's requests cost one review per TTL; a failed review
// is not cached, and its error (ErrTokenReview) makes the request a 401.
func TokenReview(opts TokenReviewOptions) (TokenAuthenticator, error) {
	if opts.URL == "" || opts.Client == nil {
		return nil, errors.New("authn: TokenReviewOptions.URL and Client are required")
	}
	if opts.CacheTTL == 0 {
		opts.CacheTTL = 10 * time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	return &tokenReview{opts: opts, url: strings.TrimSuffix(opts.URL, "/") + "/apis/authentication.k8s.io/v1/tokenreviews"}, nil
}

type tokenReview struct {
	opts  TokenReviewOptions
	url   string
	cache review.Cache[tokenAnswer]
}

type tokenAnswer struct {
	user *request.User
	ok   bool
}

func (t *tokenReview) AuthenticateToken(ctx context.Context, token string) (*request.User, bool, error) {
	sum := sha256.Sum256([]byte(token))
	key := string(sum[:])
	if a, ok := t.cache.Get(key); ok {
		return a.user, a.ok, nil
	}
	var out struct {
		Status struct {
			Authenticated bool
			User          struct {
				Username string
				UID      string
				Groups   []string
				Extra    map[string][]string
			}
			Error string
		}
	}
	body := map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": map[string]any{"token": token}}
	if err := review.Post(ctx, t.opts.Client, t.opts.Timeout, t.url, body, &out); err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrTokenReview, err)
	}
	a := tokenAnswer{ok: out.Status.Authenticated}
	if a.ok {
		u := out.Status.User
		a.user = &request.User{Name: u.Username, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
	}
	t.cache.Put(key, a, t.opts.CacheTTL)
	return a.user, a.ok, nil
}
