package registry_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/registry/authn"
	"github.com/kapi-dev/kapi/registry/authz"
	kreq "github.com/kapi-dev/kapi/registry/request"
	"github.com/kapi-dev/kapi/storage/memory"
)

// mainServer is a registry that answers TokenReviews from a token table
// and SubjectAccessReviews from an authorizer that lets alice list
// configmaps, denies bob everything and has no opinion otherwise; posts
// counts the reviews it answered.
func mainServer(t *testing.T) (url string, posts *atomic.Int64, stop func()) {
	t.Helper()
	tokens := authn.NewTokens(map[string]kreq.User{"alice-token": {Name: "alice", UID: "1", Groups: []string{"dev"}}})
	au, err := authn.New(authn.Options{Tokens: tokens, Anonymous: true})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{}), Authenticator: au,
		Authorizer: authz.Func(func(_ context.Context, a authz.Attributes) (authz.Decision, string, error) {
			switch {
			case a.Resource == "subjectaccessreviews" || a.Resource == "tokenreviews":
				return authz.Allow, "", nil
			case a.User.Name == "alice" && a.Verb == "list" && a.Resource == "configmaps" && a.Namespace == "a":
				return authz.Allow, "alice may", nil
			case a.User.Name == "bob":
				return authz.Deny, "bob may not", nil
			}
			return authz.NoOpinion, "no rule", nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	posts = &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		posts.Add(1)
		reg.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, posts, srv.Close
}

// TestTokenReviewDelegation asks the main server about tokens, caching
// its answers, and fails (uncached) when it does not answer.
func TestTokenReviewDelegation(t *testing.T) {
	url, posts, stop := mainServer(t)
	ta, err := authn.TokenReview(authn.TokenReviewOptions{URL: url, Client: http.DefaultClient})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tests := []struct {
		token     string
		wantUser  string
		wantOK    bool
		wantPosts int64
	}{
		{"alice-token", "alice", true, 1},
		{"alice-token", "alice", true, 1}, // cached
		{"nope", "", false, 2},
		{"nope", "", false, 2}, // a refusal is cached too
	}
	for i, tt := range tests {
		u, ok, err := ta.AuthenticateToken(ctx, tt.token)
		if err != nil || ok != tt.wantOK || (ok && (u.Name != tt.wantUser || u.UID != "1" || len(u.Groups) == 0 || u.Groups[0] != "dev")) {
			t.Errorf("%d %s: got %+v %v %v; want %s %v", i, tt.token, u, ok, err, tt.wantUser, tt.wantOK)
		}
		if n := posts.Load(); n != tt.wantPosts {
			t.Errorf("%d %s: %d reviews posted; want %d", i, tt.token, n, tt.wantPosts)
		}
	}
	stop()
	if _, _, err := ta.AuthenticateToken(ctx, "other"); !errors.Is(err, authn.ErrTokenReview) {
		t.Errorf("main server down: got %v; want ErrTokenReview", err)
	}
}

// TestSubjectAccessReviewDelegation asks the main server's authorizer,
// caching its answers.
func TestSubjectAccessReviewDelegation(t *testing.T) {
	url, posts, stop := mainServer(t)
	z, err := authz.SubjectAccessReview(authz.SubjectAccessReviewOptions{URL: url, Client: http.DefaultClient})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	alice := &kreq.User{Name: "alice", Groups: []string{"dev"}}
	bob := &kreq.User{Name: "bob"}
	list := authz.Attributes{ResourceRequest: true, Verb: "list", APIVersion: "v1", Resource: "configmaps", Namespace: "a"}
	tests := []struct {
		name       string
		user       *kreq.User
		a          authz.Attributes
		want       authz.Decision
		wantReason string
		wantPosts  int64
	}{
		{"allowed", alice, list, authz.Allow, "alice may", 1},
		{"allowed, cached", alice, list, authz.Allow, "alice may", 1},
		{"denied", bob, list, authz.Deny, "bob may not", 2},
		{"no opinion", alice, authz.Attributes{Verb: "get", Path: "/metrics"}, authz.NoOpinion, "no rule", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.a
			a.User = tt.user
			d, reason, err := z.Authorize(ctx, a)
			if err != nil || d != tt.want || !strings.Contains(reason, tt.wantReason) {
				t.Errorf("got %v %q %v; want %v %q", d, reason, err, tt.want, tt.wantReason)
			}
			if n := posts.Load(); n != tt.wantPosts {
				t.Errorf("%d reviews posted; want %d", n, tt.wantPosts)
			}
		})
	}
	stop()
	if _, _, err := z.Authorize(ctx, authz.Attributes{User: bob, Verb: "get", Path: "/x"}); !errors.Is(err, authz.ErrSubjectAccessReview) {
		t.Errorf("main server down: got %v; want ErrSubjectAccessReview", err)
	}
}
