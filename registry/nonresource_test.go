package registry_test

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/registry/authn"
	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/authz/rbac"
	kreq "github.com/kapi-dev/kapi/registry/request"
	"github.com/kapi-dev/kapi/storage/memory"
)

// TestHandleNonResource: an added path and the paths under it reach the
// program's handler after the authorizer allowed them, with the request's
// Info and User in its context; an added /livez replaces the registry's.
func TestHandleNonResource(t *testing.T) {
	var asked []string
	reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{}),
		Authorizer: authz.Func(func(_ context.Context, a authz.Attributes) (authz.Decision, string, error) {
			asked = append(asked, a.Verb+" "+a.Path)
			if a.Path == "/metrics" {
				return authz.NoOpinion, "", nil
			}
			return authz.Allow, "", nil
		})})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	echo := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		info, _ := kreq.InfoFrom(req.Context())
		u, _ := kreq.UserFrom(req.Context())
		io.WriteString(w, "mine "+info.Path+" "+u.Name)
	})
	reg.HandleNonResource("/livez", echo)
	reg.HandleNonResource("/metrics/", echo)
	tests := []struct {
		path     string
		wantCode int
		wantBody string
	}{
		{"/livez", 200, "mine /livez system:anonymous"},
		{"/livez/ping", 200, "mine /livez/ping system:anonymous"},
		{"/livezz", 404, "the server could not find the requested resource"},
		{"/readyz", 200, "ok"}, // still the registry's own
		{"/metrics", 403, `forbidden: User \"system:anonymous\" cannot get path \"/metrics\"`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			asked = nil
			w := httptest.NewRecorder()
			reg.ServeHTTP(w, httptest.NewRequest("GET", tt.path, nil))
			if w.Code != tt.wantCode || !strings.Contains(w.Body.String(), tt.wantBody) {
				t.Errorf("got %d %s; want %d %s", w.Code, w.Body, tt.wantCode, tt.wantBody)
			}
			if len(asked) != 1 || asked[0] != "get "+tt.path {
				t.Errorf("the authorizer was asked %q; want once, get %s", asked, tt.path)
			}
		})
	}
}

// TestRecord: a request carrying a request.Record comes back with the
// user the registry authenticated and the error it answered with.
func TestRecord(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		path    string
		wantErr string
	}{
		{"/api/v1/namespaces/default/configmaps", ""},
		{"/api/v1/namespaces/default/configmaps/missing", `configmaps "missing" not found`},
	}
	for _, tt := range tests {
		rec := &kreq.Record{}
		req := httptest.NewRequest("GET", tt.path, nil)
		w := httptest.NewRecorder()
		s.reg.ServeHTTP(w, req.WithContext(kreq.WithRecord(req.Context(), rec)))
		if u := rec.User(); u == nil || u.Name != kreq.Anonymous {
			t.Errorf("%s: recorded user %+v; want %s", tt.path, u, kreq.Anonymous)
		}
		got := ""
		if err := rec.Err(); err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, tt.wantErr) || (tt.wantErr == "") != (rec.Err() == nil) {
			t.Errorf("%s: recorded error %q; want %q", tt.path, got, tt.wantErr)
		}
	}
}

// TestCountObjects counts what each resource stores, under kube's
// resource labels, and Ping answers while the store does.
func TestCountObjects(t *testing.T) {
	s := newServer(t)
	for _, name := range []string{"a", "b", "c"} {
		if r := s.do("POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"`+name+`"}}`); r.code != 201 {
			t.Fatalf("create: %d %s", r.code, r.body)
		}
	}
	if r := s.do("POST", "/apis/example.com/v1/namespaces/default/widgets", `{"metadata":{"name":"w"}}`); r.code != 201 {
		t.Fatalf("create: %d %s", r.code, r.body)
	}
	got, err := s.reg.CountObjects(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"configmaps": 3, "widgets.example.com": 1, "namespaces": 1}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("count %s: got %d; want %d (all: %v)", k, got[k], v, got)
		}
	}
	if err := s.reg.Ping(context.Background()); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

// watchCounter records Options.Metrics' watch events.
type watchCounter struct {
	mu     sync.Mutex
	events map[string]int
}

func (c *watchCounter) WatchEvents(group, version, resource string, events, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if bytes <= 0 {
		panic("no bytes")
	}
	c.events[group+"/"+version+"/"+resource] += events
}

// TestWatchEventsMetrics: every event a watch sends is counted once.
func TestWatchEventsMetrics(t *testing.T) {
	c := &watchCounter{events: map[string]int{}}
	reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{}), Metrics: c})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	if err := reg.Register(configMaps()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(reg)
	defer srv.Close()
	for _, name := range []string{"a", "b"} {
		resp, err := http.Post(srv.URL+"/api/v1/namespaces/default/configmaps", "application/json", strings.NewReader(`{"metadata":{"name":"`+name+`"}}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	// A watch from 0 sends the two ADDED events, then ends at its timeout.
	resp, err := http.Get(srv.URL + "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if n := strings.Count(string(body), `"type":"ADDED"`); n != 2 {
		t.Fatalf("the watch sent %d ADDED events; want 2:\n%s", n, body)
	}
	c.mu.Lock()
	got := maps.Clone(c.events)
	c.mu.Unlock()
	if got["/v1/configmaps"] != 2 {
		t.Errorf("counted %v; want 2 events of /v1/configmaps", got)
	}
}

// TestSynced: with RBAC the registry is synced once its feeds applied
// the stored roles and bindings; without it at once.
func TestSynced(t *testing.T) {
	for _, withRBAC := range []bool{false, true} {
		opts := registry.Options{Storage: memory.New(memory.Options{})}
		if withRBAC {
			opts.RBAC = rbac.New()
		}
		reg, err := registry.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		for reg.Synced(ctx) != nil && ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
		if err := reg.Synced(ctx); err != nil {
			t.Errorf("RBAC %v: %v; want synced", withRBAC, err)
		}
		cancel()
		reg.Close()
	}
}

// TestAuthenticate finds the request's user as serving it would, and
// leaves the request as it was (the token authenticator removes the
// header it read from what it authenticates).
func TestAuthenticate(t *testing.T) {
	au, err := authn.New(authn.Options{Tokens: authn.NewTokens(map[string]kreq.User{"t": {Name: "alice", Groups: []string{"dev"}}})})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{}), Authenticator: au})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	tests := []struct {
		auth, wantUser string
	}{{"Bearer t", "alice"}, {"Bearer nope", ""}}
	for _, tt := range tests {
		req := httptest.NewRequest("GET", "/api", nil)
		req.Header.Set("Authorization", tt.auth)
		u, err := reg.Authenticate(req)
		got := ""
		if err == nil {
			got = u.Name
		}
		if got != tt.wantUser || (tt.wantUser == "") != (err != nil) {
			t.Errorf("%s: got %q, %v; want %q", tt.auth, got, err, tt.wantUser)
		}
		if req.Header.Get("Authorization") != tt.auth {
			t.Errorf("%s: the request's Authorization became %q", tt.auth, req.Header.Get("Authorization"))
		}
	}
}
