package registry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/request"
	"github.com/kapi-dev/kapi/storage/memory"
)

// recorder is an authorizer that records what it is asked and answers
// with decide.
type recorder struct {
	mu     sync.Mutex
	asked  []authz.Attributes
	decide authz.Decision
}

func (z *recorder) Authorize(_ context.Context, a authz.Attributes) (authz.Decision, string, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.asked = append(z.asked, a)
	return z.decide, "", nil
}

func (z *recorder) take() []authz.Attributes {
	z.mu.Lock()
	defer z.mu.Unlock()
	out := z.asked
	z.asked = nil
	return out
}

// routeTestRegistry serves a resource of every shape: namespaced with
// status, scale and a custom subresource, and cluster-scoped.
func routeTestRegistry(t *testing.T, z authz.Authorizer) *Registry {
	t.Helper()
	r, err := New(Options{Storage: memory.New(memory.Options{}), Authorizer: z, DisableGarbageCollection: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	for _, res := range []*Resource{
		{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true, Status: true,
			Scale: &Scale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"},
			Subresources: map[string]SubresourceHandler{"ping": func(context.Context, SubresourceRequest) (any, error) {
				return map[string]any{"pong": true}, nil
			}}},
		{Group: "example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets"},
		{Version: "v1", Kind: "ConfigMap", Plural: "configmaps", Namespaced: true},
	} {
		if err := r.Register(res); err != nil {
			t.Fatal(err)
		}
	}
	// A program's own non-resource paths (HandleNonResource) are routes
	// too.
	r.HandleNonResource("/metrics", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("# metrics")) }))
	return r
}

// TestEveryRouteIsAuthorized takes the router's own table and proves
// that each route asks the authorizer once, with the attributes kube's
// request info gives it, before its handler runs: denied, each answers
// kube's 403; allowed, each reaches its handler.
func TestEveryRouteIsAuthorized(t *testing.T) {
	z := &recorder{decide: authz.NoOpinion}
	r := routeTestRegistry(t, z)
	table := r.routeTable()
	if len(table) < 40 {
		t.Fatalf("the route table has %d routes; want every verb of every endpoint", len(table))
	}
	for _, rt := range table {
		t.Run(rt.Method+" "+rt.Path, func(t *testing.T) {
			z.decide = authz.NoOpinion
			w := httptest.NewRecorder()
			r.ServeHTTP(w, httptest.NewRequest(rt.Method, rt.Path, nil))
			asked := z.take()
			if len(asked) != 1 {
				t.Fatalf("the authorizer was asked %d times; want once", len(asked))
			}
			a := asked[0]
			want := authz.AttributesFrom(&request.User{Name: request.Anonymous, Groups: []string{request.AllUnauthenticated}}, &rt.Info)
			a.User, want.User = nil, nil
			if a != want {
				t.Errorf("asked with %+v; want %+v", a, want)
			}
			if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), `"reason":"Forbidden"`) {
				t.Errorf("denied: got %d %s; want 403 Forbidden", w.Code, w.Body)
			}

			z.decide = authz.Allow
			w = httptest.NewRecorder()
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			r.ServeHTTP(w, httptest.NewRequest(rt.Method, rt.Path, nil).WithContext(ctx))
			if n := len(z.take()); n != 1 {
				t.Errorf("allowed: the authorizer was asked %d times; want once", n)
			}
			if (w.Code == http.StatusForbidden && strings.Contains(w.Body.String(), `User \"`)) || w.Code == http.StatusMethodNotAllowed || strings.Contains(w.Body.String(), "the server could not find the requested resource") {
				t.Errorf("allowed: got %d %s; want the route's handler to answer", w.Code, w.Body)
			}
		})
	}
}

// TestForbiddenMessages are kube's 403 texts.
func TestForbiddenMessages(t *testing.T) {
	alice := &request.User{Name: "alice"}
	tests := []struct {
		a    authz.Attributes
		want string
	}{
		{authz.Attributes{User: alice, ResourceRequest: true, Verb: "list", Resource: "configmaps", Namespace: "b"},
			`configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "b"`},
		{authz.Attributes{User: alice, ResourceRequest: true, Verb: "get", APIGroup: "example.com", Resource: "widgets", Subresource: "status", Namespace: "a", Name: "w"},
			`widgets.example.com "w" is forbidden: User "alice" cannot get resource "widgets/status" in API group "example.com" in the namespace "a"`},
		{authz.Attributes{User: alice, ResourceRequest: true, Verb: "create", APIGroup: "example.com", Resource: "gadgets"},
			`gadgets.example.com is forbidden: User "alice" cannot create resource "gadgets" in API group "example.com" at the cluster scope`},
		{authz.Attributes{User: alice, Verb: "get", Path: "/version"},
			`forbidden: User "alice" cannot get path "/version"`},
	}
	for _, tt := range tests {
		if got := errForbidden(tt.a, "").Status.Message; got != tt.want {
			t.Errorf("got %s; want %s", got, tt.want)
		}
	}
}

// TestUnsafeDeleteIsAuthorized: a delete that ignores read errors needs
// its own verb besides delete, as in kube.
func TestUnsafeDeleteIsAuthorized(t *testing.T) {
	var asked []string
	z := authz.Func(func(_ context.Context, a authz.Attributes) (authz.Decision, string, error) {
		asked = append(asked, a.Verb)
		if a.Verb == unsafeDeleteVerb {
			return authz.NoOpinion, "no rule", nil
		}
		return authz.Allow, "", nil
	})
	r := routeTestRegistry(t, z)
	w := httptest.NewRecorder()
	r.ServeHTTP(w, httptest.NewRequest("DELETE", "/apis/example.com/v1/namespaces/default/widgets/w?ignoreStoreReadErrorWithClusterBreakingPotential=true", nil))
	want := `widgets.example.com \"w\" is forbidden: not permitted to do \"unsafe-delete-ignore-read-errors\", reason: no rule`
	if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), want) {
		t.Errorf("got %d %s; want 403 with %s", w.Code, w.Body, want)
	}
	if strings.Join(asked, ",") != "delete,"+unsafeDeleteVerb {
		t.Errorf("asked for %v; want delete, then %s", asked, unsafeDeleteVerb)
	}
}

// TestRouteNotFound: paths that name no served endpoint are 404, whatever
// the authorizer allows.
func TestRouteNotFound(t *testing.T) {
	r := routeTestRegistry(t, authz.AlwaysAllow)
	for _, p := range []string{
		"/api/v1/namespaces/default/configmaps//x", "/api/v1/namespaces/default/configmaps/x/y/z",
		"/apis/example.com/v1/namespaces/default/gadgets", "/apis/example.com/v1/widgets/w",
		"/apis/example.com/v1/namespaces/default/widgets/w/nope", "/apis/example.com/v2/widgets", "/nope",
		"/api/v1/watch",
	} {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest("GET", p, nil))
		if w.Code != http.StatusNotFound {
			t.Errorf("GET %s: got %d %s; want 404", p, w.Code, w.Body)
		}
	}
}
