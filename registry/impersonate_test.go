package registry

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// TestConstrainedImpersonation: kube's modes (impersonate.go) on RBAC
// roles granting each of them, and the refusal each reports.
func TestConstrainedImpersonation(t *testing.T) {
	s := newRBACServer(t)
	const clusterRoles, clusterBindings = "/apis/rbac.authorization.k8s.io/v1/clusterroles", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"
	grant := func(name, user, rules string) {
		s.must("admin", 201, "POST", clusterRoles, `{"metadata":{"name":"`+name+`"},"rules":`+rules+`}`)
		s.must("admin", 201, "POST", clusterBindings, `{"metadata":{"name":"`+name+`"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"`+name+`"},"subjects":[{"kind":"User","name":"`+user+`"}]}`)
	}
	// bob may list configmaps as carol (user-info), and nothing else.
	grant("bob-as-carol", "bob", `[{"apiGroups":["authentication.k8s.io"],"resources":["users"],"resourceNames":["carol"],"verbs":["impersonate:user-info"]},
		{"apiGroups":[""],"resources":["configmaps"],"verbs":["impersonate-on:user-info:list"]}]`)
	grant("carol-reads", "carol", `[{"apiGroups":[""],"resources":["configmaps"],"verbs":["list","get"]}]`)
	// alice may impersonate anyone the legacy way.
	grant("alice-impersonates", "alice", `[{"apiGroups":[""],"resources":["users","groups"],"verbs":["impersonate"]}]`)
	// bob may also impersonate node n1 for get.
	grant("bob-as-node", "bob", `[{"apiGroups":["authentication.k8s.io"],"resources":["nodes"],"resourceNames":["n1"],"verbs":["impersonate:arbitrary-node"]},
		{"apiGroups":[""],"resources":["configmaps"],"verbs":["impersonate-on:arbitrary-node:get"]}]`)

	for _, tt := range []struct {
		name, user, method, path string
		headers                  []string
		code                     int
		want                     string
	}{
		{"user-info allows list", "bob", "GET", "/api/v1/namespaces/a/configmaps", []string{"Impersonate-User", "carol"}, 200, `"kind":"ConfigMapList"`},
		{"user-info refuses get", "bob", "GET", "/api/v1/namespaces/a/configmaps/x", []string{"Impersonate-User", "carol"}, 403,
			`configmaps \"x\" is forbidden: User \"bob\" cannot impersonate-on:user-info:get resource \"configmaps\" in API group \"\" in the namespace \"a\"`},
		{"user-info refuses another user", "bob", "GET", "/api/v1/namespaces/a/configmaps", []string{"Impersonate-User", "erin"}, 403,
			`users.authentication.k8s.io \"erin\" is forbidden: User \"bob\" cannot impersonate:user-info resource \"users\" in API group \"authentication.k8s.io\" at the cluster scope`},
		{"legacy allows", "alice", "GET", "/api/v1/namespaces/a/configmaps", []string{"Impersonate-User", "carol", "Impersonate-Group", "g"}, 200, `"kind":"ConfigMapList"`},
		{"refused: the first mode's refusal", "alice", "GET", "/api/v1/namespaces/a/configmaps", []string{"Impersonate-User", "carol", "Impersonate-Uid", "u1"}, 403,
			`configmaps is forbidden: User \"alice\" cannot impersonate-on:user-info:list resource \"configmaps\" in API group \"\" in the namespace \"a\"`},
		{"arbitrary-node allows (the node may not get)", "bob", "GET", "/api/v1/namespaces/a/configmaps/x", []string{"Impersonate-User", "system:node:n1"}, 403,
			`configmaps \"x\" is forbidden: User \"system:node:n1\" cannot get resource \"configmaps\"`},
		{"arbitrary-node: another node", "bob", "GET", "/api/v1/namespaces/a/configmaps/x", []string{"Impersonate-User", "system:node:n2"}, 403,
			`nodes.authentication.k8s.io \"n2\" is forbidden: User \"bob\" cannot impersonate:arbitrary-node resource \"nodes\" in API group \"authentication.k8s.io\" at the cluster scope`},
		// Neither arbitrary-node (groups) nor user-info (a node's name)
		// applies: only legacy, whose refusal is the answer.
		{"a node with groups is legacy's", "bob", "GET", "/api/v1/namespaces/a/configmaps/x", []string{"Impersonate-User", "system:node:n1", "Impersonate-Group", "g"}, 403,
			`users \"system:node:n1\" is forbidden: User \"bob\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, tt.path, nil)
			req.Header.Set("Authorization", "Bearer "+tt.user)
			for i := 0; i < len(tt.headers); i += 2 {
				req.Header.Add(tt.headers[i], tt.headers[i+1])
			}
			w := httptest.NewRecorder()
			s.r.ServeHTTP(w, req)
			if w.Code != tt.code || !strings.Contains(w.Body.String(), tt.want) {
				t.Errorf("got %d %s; want %d with %s", w.Code, w.Body, tt.code, tt.want)
			}
		})
	}
}

// TestDomainPathErrors: apimachinery's IsDomainPrefixedPath, in kube's
// aggregated words (compared with kube-apiserver by the conformance
// module's TestImpersonationAsKube).
func TestDomainPathErrors(t *testing.T) {
	const subdomain = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	const path = `Invalid path (regex used for validation is '[A-Za-z0-9/\-._~%!$&'()*+,;=:]+')`
	for _, tt := range []struct{ key, want string }{
		{"acme.io/team", ""},
		{"acme.io/a/b", ""},
		{"scopes", `extra.key: Invalid value: "scopes": must be a domain-prefixed path (such as "acme.io/foo")`},
		{"acme.io/", `extra.key: Invalid value: "acme.io/": must be a domain-prefixed path (such as "acme.io/foo")`},
		{"bad_host/x", `extra.key: Invalid value: "bad_host": ` + subdomain},
		{"acme.io/a b", `extra.key: Invalid value: "a b": ` + path},
		{"-a_/b c", `[extra.key: Invalid value: "-a_": ` + subdomain + `, extra.key: Invalid value: "b c": ` + path + `]`},
	} {
		if got := domainPathErrors(tt.key); got != tt.want {
			t.Errorf("domainPathErrors(%q): got\n%s\nwant\n%s", tt.key, got, tt.want)
		}
	}
}
