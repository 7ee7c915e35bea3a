package registry

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/registry/authn"
	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/authz/rbac"
	"github.com/kapi-dev/kapi/registry/request"
	"github.com/kapi-dev/kapi/storage/memory"
)

// rbacServer enforces RBAC for three users: admin (system:masters),
// alice and bob (group dev), each with a bearer token of their name.
type rbacServer struct {
	t *testing.T
	r *Registry
}

func newRBACServer(t *testing.T) *rbacServer {
	t.Helper()
	z := rbac.New()
	tokens := authn.NewTokens(map[string]request.User{
		"admin": {Name: "admin", Groups: []string{request.SystemPrivileged}},
		"alice": {Name: "alice"},
		"bob":   {Name: "bob", Groups: []string{"dev"}},
	})
	a, err := authn.New(authn.Options{Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Options{Storage: memory.New(memory.Options{}), Authenticator: a, RBAC: z,
		Authorizer: authz.Union(authz.Privileged(request.SystemPrivileged), z)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	if err := r.Register(&Resource{Version: "v1", Kind: "ConfigMap", Plural: "configmaps", Namespaced: true}); err != nil {
		t.Fatal(err)
	}
	s := &rbacServer{t: t, r: r}
	for _, ns := range []string{"a", "b"} {
		s.must("admin", 201, "POST", "/api/v1/namespaces", `{"metadata":{"name":"`+ns+`"}}`)
	}
	return s
}

// do sends a request as user and returns its code and body.
func (s *rbacServer) do(user, method, path, body string) (int, string) {
	s.t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+user)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	s.r.ServeHTTP(w, req)
	return w.Code, w.Body.String()
}

func (s *rbacServer) must(user string, code int, method, path, body string) string {
	s.t.Helper()
	got, out := s.do(user, method, path, body)
	if got != code {
		s.t.Fatalf("%s %s as %s: got %d %s; want %d", method, path, user, got, out, code)
	}
	return out
}

func (s *rbacServer) message(user, method, path, body string) string {
	s.t.Helper()
	_, out := s.do(user, method, path, body)
	var st Status
	json.Unmarshal([]byte(out), &st)
	return st.Message
}

const (
	rolesA    = "/apis/rbac.authorization.k8s.io/v1/namespaces/a/roles"
	bindingsA = "/apis/rbac.authorization.k8s.io/v1/namespaces/a/rolebindings"
)

func TestRBACEnforced(t *testing.T) {
	s := newRBACServer(t)
	// Bootstrap: kube's defaults exist, and discovery is everyone's.
	s.must("admin", 200, "GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/cluster-admin", "")
	s.must("alice", 200, "GET", "/apis", "")
	s.must("alice", 201, "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", `{"spec":{"resourceAttributes":{"verb":"list","resource":"configmaps"}}}`)

	if got, want := s.message("alice", "GET", "/api/v1/namespaces/a/configmaps", ""),
		`configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "a"`; got != want {
		t.Errorf("before any binding: got %q; want %q", got, want)
	}
	s.must("admin", 201, "POST", rolesA, `{"metadata":{"name":"cm-reader"},"rules":[{"apiGroups":[""],"resources":["configmaps"],"verbs":["get","list"]}]}`)
	s.must("admin", 201, "POST", bindingsA, `{"metadata":{"name":"alice-reads"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"cm-reader"},"subjects":[{"kind":"User","name":"alice"}]}`)
	// The binding decides alice's very next request.
	s.must("alice", 200, "GET", "/api/v1/namespaces/a/configmaps", "")
	if got, want := s.message("alice", "GET", "/api/v1/namespaces/b/configmaps", ""),
		`configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "b"`; got != want {
		t.Errorf("in b: got %q; want %q", got, want)
	}
	if got, _ := s.do("alice", "POST", "/api/v1/namespaces/a/configmaps", `{"metadata":{"name":"x"}}`); got != 403 {
		t.Errorf("create in a: got %d; want 403", got)
	}
	// A roleRef cannot change.
	if got, out := s.do("admin", "PUT", bindingsA+"/alice-reads", `{"metadata":{"name":"alice-reads"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"view"},"subjects":[{"kind":"User","name":"alice"}]}`); got != 422 || !strings.Contains(out, `roleRef: Invalid value: {\"APIGroup\":\"rbac.authorization.k8s.io\",\"Kind\":\"ClusterRole\",\"Name\":\"view\"}: field is immutable`) {
		t.Errorf("roleRef change: got %d %s; want 422", got, out)
	}
	// Deleted, the binding no longer grants, at once.
	s.must("admin", 200, "DELETE", bindingsA+"/alice-reads", "")
	if got, _ := s.do("alice", "GET", "/api/v1/namespaces/a/configmaps", ""); got != 403 {
		t.Errorf("after the binding's delete: got %d; want 403", got)
	}
}

func TestRBACEscalation(t *testing.T) {
	s := newRBACServer(t)
	// bob's group may write roles and bindings in a, and read configmaps there.
	s.must("admin", 201, "POST", rolesA, `{"metadata":{"name":"rbac-writer"},"rules":[{"apiGroups":["rbac.authorization.k8s.io"],"resources":["roles","rolebindings"],"verbs":["create","update"]},{"apiGroups":[""],"resources":["configmaps"],"verbs":["get","list"]}]}`)
	s.must("admin", 201, "POST", bindingsA, `{"metadata":{"name":"dev"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"rbac-writer"},"subjects":[{"kind":"Group","name":"dev"}]}`)

	// What bob holds, he may grant.
	s.must("bob", 201, "POST", rolesA, `{"metadata":{"name":"reader"},"rules":[{"apiGroups":[""],"resources":["configmaps"],"verbs":["list"]}]}`)
	// What he lacks, he may not.
	want := `roles.rbac.authorization.k8s.io "secret-reader" is forbidden: user "bob" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:` + "\n" + `{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`
	if got := s.message("bob", "POST", rolesA, `{"metadata":{"name":"secret-reader"},"rules":[{"apiGroups":[""],"resources":["secrets"],"verbs":["get"]}]}`); got != want {
		t.Errorf("escalating role: got\n%s\nwant\n%s", got, want)
	}
	if got, out := s.do("bob", "POST", bindingsA, `{"metadata":{"name":"me-admin"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},"subjects":[{"kind":"User","name":"bob"}]}`); got != 403 || !strings.Contains(out, "attempting to grant RBAC permissions not currently held") {
		t.Errorf("binding cluster-admin: got %d %s; want 403", got, out)
	}
	// A binding to a role he holds is fine; one to a missing role is 404.
	s.must("bob", 201, "POST", bindingsA, `{"metadata":{"name":"alice-reads"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"reader"},"subjects":[{"kind":"User","name":"alice"}]}`)
	if got, _ := s.do("bob", "POST", bindingsA, `{"metadata":{"name":"nothing"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"missing"},"subjects":[{"kind":"User","name":"alice"}]}`); got != 404 {
		t.Errorf("binding a missing role: got %d; want 404", got)
	}
	// With the escalate verb, he may grant anything.
	s.must("admin", 201, "POST", rolesA, `{"metadata":{"name":"escalator"},"rules":[{"apiGroups":["rbac.authorization.k8s.io"],"resources":["roles"],"verbs":["escalate"]}]}`)
	s.must("admin", 201, "POST", bindingsA, `{"metadata":{"name":"bob-escalates"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"escalator"},"subjects":[{"kind":"User","name":"bob"}]}`)
	s.must("bob", 201, "POST", rolesA, `{"metadata":{"name":"secret-reader"},"rules":[{"apiGroups":[""],"resources":["secrets"],"verbs":["get"]}]}`)
}

func TestRBACRulesReviewAndImpersonation(t *testing.T) {
	s := newRBACServer(t)
	s.must("admin", 201, "POST", rolesA, `{"metadata":{"name":"cm-reader"},"rules":[{"apiGroups":[""],"resources":["configmaps"],"verbs":["get","list"]}]}`)
	s.must("admin", 201, "POST", bindingsA, `{"metadata":{"name":"alice-reads"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"cm-reader"},"subjects":[{"kind":"User","name":"alice"}]}`)
	out := s.must("alice", 201, "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", `{"spec":{"namespace":"a"}}`)
	if !strings.Contains(out, `{"apiGroups":[""],"resources":["configmaps"],"verbs":["get","list"]}`) || !strings.Contains(out, `"selfsubjectaccessreviews"`) {
		t.Errorf("alice's rules in a: %s", out)
	}
	// admin may impersonate; bob may not.
	req := httptest.NewRequest("GET", "/api/v1/namespaces/a/configmaps", nil)
	req.Header.Set("Authorization", "Bearer admin")
	req.Header.Set("Impersonate-User", "alice")
	w := httptest.NewRecorder()
	s.r.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		t.Errorf("admin as alice in a: got %d %s", w.Code, w.Body)
	}
	req = httptest.NewRequest("GET", "/api/v1/namespaces/a/configmaps", nil)
	req.Header.Set("Authorization", "Bearer bob")
	req.Header.Set("Impersonate-User", "alice")
	w = httptest.NewRecorder()
	s.r.ServeHTTP(w, req)
	if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), `User \"bob\" cannot impersonate-on:user-info:list resource \"configmaps\" in API group \"\" in the namespace \"a\"`) {
		t.Errorf("bob as alice: got %d %s", w.Code, w.Body)
	}
}

func TestRBACAggregation(t *testing.T) {
	s := newRBACServer(t)
	const crs = "/apis/rbac.authorization.k8s.io/v1/clusterroles"
	s.must("admin", 201, "POST", crs, `{"metadata":{"name":"agg"},"aggregationRule":{"clusterRoleSelectors":[{"matchLabels":{"team":"x"}}]}}`)
	s.must("admin", 201, "POST", crs, `{"metadata":{"name":"part","labels":{"team":"x"}},"rules":[{"apiGroups":["example.com"],"resources":["widgets"],"verbs":["get"]}]}`)
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := s.must("admin", 200, "GET", crs+"/agg", "")
		if strings.Contains(out, `"rules":[{"apiGroups":["example.com"],"resources":["widgets"],"verbs":["get"]}]`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("agg never aggregated part's rules: %s", out)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The view role aggregates what is labelled for it, as kube's.
	s.must("admin", 201, "POST", crs, `{"metadata":{"name":"widget-view","labels":{"rbac.authorization.k8s.io/aggregate-to-view":"true"}},"rules":[{"apiGroups":["example.com"],"resources":["widgets"],"verbs":["list"]}]}`)
	for {
		if out := s.must("admin", 200, "GET", crs+"/view", ""); strings.Contains(out, `"widgets"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("view never aggregated widget-view")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRoleRulesNull: a role's rules read as kube's Go JSON writes them:
// null when there are none (no omitempty), and a null in the body is no
// field the writer owns.
func TestRoleRulesNull(t *testing.T) {
	s := newRBACServer(t)
	tests := []struct {
		name, rules string
		want        string // rules in the answer
		owned       bool   // whether managedFields own rules
	}{
		{"absent", ``, `null`, false},
		{"null", `,"rules":null`, `null`, false},
		{"empty", `,"rules":[]`, `null`, true},
		{"some", `,"rules":[{"apiGroups":[""],"resources":["configmaps"],"verbs":["get"]}]`, `[{"apiGroups":[""],"resources":["configmaps"],"verbs":["get"]}]`, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := s.must("admin", 201, "POST", rolesA, fmt.Sprintf(`{"metadata":{"name":"r%d"}%s}`, i, tt.rules))
			var got struct {
				Rules    json.RawMessage `json:"rules"`
				Metadata struct {
					ManagedFields []json.RawMessage `json:"managedFields"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatal(err)
			}
			if string(got.Rules) != tt.want {
				t.Errorf("rules %s; want %s", got.Rules, tt.want)
			}
			owned := false
			for _, mf := range got.Metadata.ManagedFields {
				owned = owned || strings.Contains(string(mf), `"f:rules"`)
			}
			if owned != tt.owned {
				t.Errorf("managedFields own rules: %v; want %v", owned, tt.owned)
			}
		})
	}
}
