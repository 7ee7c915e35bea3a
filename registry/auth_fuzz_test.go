package registry

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/registry/authn"
	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/authz/rbac"
	"github.com/kapi-dev/kapi/registry/request"
	"github.com/kapi-dev/kapi/storage/memory"
)

// FuzzAuthHeaders sends requests with arbitrary credentials,
// impersonation headers and review bodies: every answer is a 2xx or a
// 4xx, never a 5xx or a panic.
func FuzzAuthHeaders(f *testing.F) {
	z := rbac.New()
	a, err := authn.New(authn.Options{Anonymous: true, Tokens: authn.NewTokens(map[string]request.User{
		"admin": {Name: "admin", Groups: []string{request.SystemPrivileged}},
		"alice": {Name: "alice"},
	})})
	if err != nil {
		f.Fatal(err)
	}
	r, err := New(Options{Storage: memory.New(memory.Options{}), Authenticator: a, RBAC: z,
		Authorizer: authz.Union(authz.Privileged(request.SystemPrivileged), z)})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { r.Close() })
	for _, s := range [][]string{
		{"Bearer admin", "alice", "g1", "", "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", `{"spec":{"resourceAttributes":{"verb":"get"}}}`},
		{"Bearer alice", "", "", "", "POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", `{"spec":{"namespace":"a"}}`},
		{"Bearer admin", "system:serviceaccount:a:b", "", "k%2Fx", "POST", "/apis/authentication.k8s.io/v1/tokenreviews", `{"spec":{"token":"alice"}}`},
		{"Basic Zm9vOmJhcg==", "", "", "", "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", `{"spec":{"user":"x","nonResourceAttributes":{"path":"/","verb":"get"}}}`},
		{"Bearer admin", "", "", "", "POST", "/apis/authorization.k8s.io/v1/namespaces/a/localsubjectaccessreviews", `{"metadata":{"namespace":"a"},"spec":{"user":"x","resourceAttributes":{"namespace":"b"}}}`},
		{"bearer", "x", "", "%zz", "GET", "/api/v1/namespaces", ""},
		{"Bearer admin", "", "", "", "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", `{"metadata":{"name":"r"},"rules":[{"verbs":["*"]}],"aggregationRule":{"clusterRoleSelectors":[{"matchExpressions":[{"key":"a","operator":"Bad"}]}]}}`},
		{"Bearer alice", "", "", "", "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", `{"metadata":{"name":"b"},"roleRef":{"kind":"Nope","name":""},"subjects":[{"kind":"User"}]}`},
	} {
		f.Add(s[0], s[1], s[2], s[3], s[4], s[5], s[6])
	}
	f.Fuzz(func(t *testing.T, authorization, user, group, extra, method, path, body string) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " ?#\x00\r\n\t") {
			return
		}
		if _, err := url.ParseRequestURI(path); err != nil {
			return // no client can send it
		}
		switch method {
		case "GET", "POST", "PUT", "PATCH", "DELETE":
		default:
			return
		}
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		set := func(k, v string) {
			if v != "" && !strings.ContainsAny(v, "\r\n\x00") {
				req.Header.Set(k, v)
			}
		}
		set("Authorization", authorization)
		set("Impersonate-User", user)
		set("Impersonate-Group", group)
		if extra != "" && !strings.ContainsAny(extra, "\r\n\x00: ") {
			req.Header.Set("Impersonate-Extra-"+extra, "v")
		}
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
		}
	})
}
