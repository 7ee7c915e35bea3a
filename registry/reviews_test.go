package registry

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/registry/authn"
	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/request"
	"github.com/kapi-dev/kapi/storage/memory"
)

// reviewRegistry authenticates "Bearer alice-token" as alice (group
// dev) and lets alice list configmaps in namespace a, nothing else.
func reviewRegistry(t *testing.T) *Registry {
	t.Helper()
	a := authn.Func(func(req *http.Request) (*request.User, bool, error) {
		switch req.Header.Get("Authorization") {
		case "Bearer alice-token":
			return &request.User{Name: "alice", UID: "1", Groups: []string{"dev", request.AllAuthenticated}, Extra: map[string][]string{"team": {"x"}}}, true, nil
		case "":
			return nil, false, nil
		case "Bearer unknown":
			return nil, false, authn.ErrInvalidBearerToken
		}
		return nil, false, errUnauthorized()
	})
	z := authz.Func(func(_ context.Context, at authz.Attributes) (authz.Decision, string, error) {
		if at.User.Name == "alice" && at.Verb == "list" && at.Resource == "configmaps" && at.Namespace == "a" {
			return authz.Allow, "", nil
		}
		if at.Resource == "selfsubjectaccessreviews" || at.Resource == "selfsubjectreviews" || at.Resource == "subjectaccessreviews" || at.Resource == "tokenreviews" || at.Resource == "selfsubjectrulesreviews" {
			return authz.Allow, "", nil
		}
		return authz.NoOpinion, "no rule", nil
	})
	r, err := New(Options{Storage: memory.New(memory.Options{}), Authenticator: a, Authorizer: z, DisableGarbageCollection: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Register(&Resource{Version: "v1", Kind: "ConfigMap", Plural: "configmaps", Namespaced: true}); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestReviews(t *testing.T) {
	r := reviewRegistry(t)
	tests := []struct {
		name, path, body string
		code             int
		want             []string // fragments of the answer
	}{
		{"can-i allowed", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
			`{"spec":{"resourceAttributes":{"verb":"list","resource":"configmaps","namespace":"a"}}}`, 201,
			[]string{`"kind":"SelfSubjectAccessReview"`, `"allowed":true`,
				// As kube: the request's fields, as a create records them.
				`"operation":"Update"`, `"fieldsV1":{"f:spec":{"f:resourceAttributes":{".":{},"f:namespace":{},"f:resource":{},"f:verb":{}}}}`}},
		// As kube: a review of its own, created now, whatever metadata
		// the request had.
		{"rules review", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", `{"metadata":{"name":"x"},"spec":{"namespace":"a"}}`, 201,
			[]string{`"kind":"SelfSubjectRulesReview","metadata":{},"spec":{},"status":{`}},
		{"whoami", "/apis/authentication.k8s.io/v1/selfsubjectreviews", `{"metadata":{"name":"x","labels":{"a":"b"}}}`, 201,
			[]string{`"kind":"SelfSubjectReview"`, `"metadata":{"creationTimestamp":"20`, `"status":{"userInfo":{`}},
		{"can-i denied", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
			`{"spec":{"resourceAttributes":{"verb":"list","resource":"configmaps","namespace":"b"}}}`, 201,
			[]string{`"allowed":false`, `"reason":"no rule"`}},
		{"neither attributes", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", `{"spec":{}}`, 422,
			[]string{`exactly one of nonResourceAttributes or resourceAttributes must be specified`}},
		{"whoami", "/apis/authentication.k8s.io/v1/selfsubjectreviews", `{}`, 201,
			[]string{`"username":"alice"`, `"uid":"1"`, `"groups":["dev","system:authenticated"]`, `"extra":{"team":["x"]}`}},
		{"subject access review", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
			`{"spec":{"user":"alice","resourceAttributes":{"verb":"list","resource":"configmaps","namespace":"a"}}}`, 201,
			[]string{`"allowed":true`}},
		{"subject access review without user", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
			`{"spec":{"resourceAttributes":{"verb":"list"}}}`, 422, []string{`at least one of user or group must be specified`}},
		// kube's words: the internal object's empty kind, every cause, Go's
		// field names for the attributes it prints.
		{"subject access review without anything", "/apis/authorization.k8s.io/v1/subjectaccessreviews", `{"spec":{}}`, 422,
			[]string{`"message":".authorization.k8s.io \"\" is invalid: [spec: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: \"\": at least one of user or group must be specified]"`,
				`"details":{"group":"authorization.k8s.io","causes":[{"reason":"FieldValueInvalid",`}},
		{"subject access review with both attributes", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
			`{"spec":{"user":"alice","resourceAttributes":{"verb":"get"},"nonResourceAttributes":{"path":"/x","verb":"get"}}}`, 422,
			[]string{`"message":".authorization.k8s.io \"\" is invalid: spec: Invalid value: {\"Path\":\"/x\",\"Verb\":\"get\"}: exactly one of nonResourceAttributes or resourceAttributes must be specified"`}},
		{"self review without attributes", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", `{"spec":{}}`, 422,
			[]string{`"message":".authorization.k8s.io \"\" is invalid: spec: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified"`}},
		{"token review", "/apis/authentication.k8s.io/v1/tokenreviews", `{"spec":{"token":"alice-token"}}`, 201,
			[]string{`"authenticated":true`, `"username":"alice"`}},
		{"token review, bad token", "/apis/authentication.k8s.io/v1/tokenreviews", `{"spec":{"token":"nope"}}`, 201,
			[]string{`"error":"Unauthorized"`}},
		// kube's words, not the authn package's error.
		{"token review, unknown token", "/apis/authentication.k8s.io/v1/tokenreviews", `{"spec":{"token":"unknown"}}`, 201,
			[]string{`"error":"invalid bearer token"`}},
		// As kube for a token of no audience of its own: good for the
		// server's audiences only (kapi has none).
		{"token review, audiences", "/apis/authentication.k8s.io/v1/tokenreviews", `{"spec":{"token":"alice-token","audiences":["x"]}}`, 201,
			[]string{`"status":{"error":"invalid bearer token","user":{}}`}},
		{"token review, no token", "/apis/authentication.k8s.io/v1/tokenreviews", `{"spec":{}}`, 400,
			[]string{`token is required for TokenReview in authentication`}},
		{"malformed body", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", `{"spec":`, 400, nil},
		{"wrong kind", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", `{"kind":"Pod","apiVersion":"authorization.k8s.io/v1"}`, 400, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", tt.path, strings.NewReader(tt.body))
			req.Header.Set("Authorization", "Bearer alice-token")
			req.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			r.ServeHTTP(w, req)
			if w.Code != tt.code {
				t.Fatalf("got %d %s; want %d", w.Code, w.Body, tt.code)
			}
			if !json.Valid(w.Body.Bytes()) {
				t.Fatalf("not JSON: %s", w.Body)
			}
			for _, f := range tt.want {
				if !strings.Contains(w.Body.String(), f) {
					t.Errorf("got %s; want it to contain %s", w.Body, f)
				}
			}
		})
	}
	for _, m := range []string{"GET", "PUT", "DELETE"} {
		req := httptest.NewRequest(m, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", nil)
		req.Header.Set("Authorization", "Bearer alice-token")
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		if w.Code != http.StatusMethodNotAllowed && w.Code != http.StatusNotFound {
			t.Errorf("%s on a review: got %d; want 405 or 404", m, w.Code)
		}
	}
}

func TestAuthenticationAndImpersonation(t *testing.T) {
	r := reviewRegistry(t)
	tests := []struct {
		name    string
		headers []string
		code    int
		want    string
	}{
		{"no credentials", nil, 401, `"reason":"Unauthorized"`},
		{"bad token", []string{"Authorization", "Bearer wrong"}, 401, `"message":"Unauthorized"`},
		{"allowed", []string{"Authorization", "Bearer alice-token"}, 200, `"kind":"ConfigMapList"`},
		{"impersonation not allowed", []string{"Authorization", "Bearer alice-token", "Impersonate-User", "bob"}, 403,
			`configmaps is forbidden: User \"alice\" cannot impersonate-on:user-info:list resource \"configmaps\" in API group \"\" in the namespace \"a\"`},
		{"groups without user", []string{"Authorization", "Bearer alice-token", "Impersonate-Group", "g"}, 400,
			`requested \u0026user.DefaultInfo{Name:\"\", UID:\"\", Groups:[]string{\"g\"}, Extra:map[string][]string(nil)} without impersonating a user name`},
		// As kube: an extra key that does not unescape is kept as sent.
		{"bad extra", []string{"Authorization", "Bearer alice-token", "Impersonate-User", "bob", "Impersonate-Extra-%zz", "v"}, 403, `cannot impersonate-on:user-info:list`},
		{"extra without user", []string{"Authorization", "Bearer alice-token", "Impersonate-Extra-%zz", "v"}, 400,
			`Extra:map[string][]string{\"%zz\":[]string{\"v\"}}} without impersonating a user name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/api/v1/namespaces/a/configmaps", nil)
			for i := 0; i < len(tt.headers); i += 2 {
				req.Header.Set(tt.headers[i], tt.headers[i+1])
			}
			w := httptest.NewRecorder()
			r.ServeHTTP(w, req)
			if w.Code != tt.code || !strings.Contains(w.Body.String(), tt.want) {
				t.Errorf("got %d %s; want %d with %s", w.Code, w.Body, tt.code, tt.want)
			}
		})
	}
}

// A TokenReview reports the server's API audiences, or those it asked
// for among them, as kube's does for a token of no audience of its own.
func TestTokenReviewAudiences(t *testing.T) {
	r := reviewRegistry(t)
	r.opts.APIAudiences = []string{"https://api.example/", "other"}
	tests := []struct {
		name, spec string
		want       string
	}{
		{"none asked", `{"token":"alice-token"}`, `"audiences":["https://api.example/","other"]`},
		{"one of them", `{"token":"alice-token","audiences":["x","other"]}`, `"audiences":["other"]`},
		{"others alone", `{"token":"alice-token","audiences":["x"]}`, `"status":{"error":"invalid bearer token","user":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", "/apis/authentication.k8s.io/v1/tokenreviews", strings.NewReader(`{"spec":`+tt.spec+`}`))
			req.Header.Set("Authorization", "Bearer alice-token")
			w := httptest.NewRecorder()
			r.ServeHTTP(w, req)
			if w.Code != 201 || !strings.Contains(w.Body.String(), tt.want) {
				t.Errorf("got %d %s; want 201 with %s", w.Code, w.Body, tt.want)
			}
		})
	}
}
