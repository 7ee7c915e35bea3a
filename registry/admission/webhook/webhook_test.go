package webhook

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/registry/admission"
	"github.com/kapi-dev/kapi/registry/request"
)

// review is what a test webhook server reads.
type review struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Request    map[string]any `json:"request"`
}

// server is a TLS (HTTP/2) webhook server answering with answer.
type server struct {
	*httptest.Server
	ca    []byte
	mu    sync.Mutex
	calls []review
}

func newServer(t testing.TB, answer func(rv review) any) *server {
	s := &server{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rv review
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &rv); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		s.mu.Lock()
		s.calls = append(s.calls, rv)
		s.mu.Unlock()
		out := answer(rv)
		if b, ok := out.([]byte); ok {
			_, _ = w.Write(b)
			return
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	s.EnableHTTP2 = true
	s.StartTLS()
	t.Cleanup(s.Close)
	s.ca = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
	return s
}

func (s *server) called() []review {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]review(nil), s.calls...)
}

// allow answers rv allowed, with patch when it is set.
func allow(rv review, patch string) map[string]any {
	resp := map[string]any{"uid": rv.Request["uid"], "allowed": true}
	if patch != "" {
		resp["patch"] = []byte(patch)
		resp["patchType"] = "JSONPatch"
	}
	return map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": resp}
}

func deny(rv review, code int, msg string) map[string]any {
	return map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
		"response": map[string]any{"uid": rv.Request["uid"], "allowed": false, "status": map[string]any{"code": code, "message": msg, "reason": "Forbidden"}}}
}

func ptr[T any](v T) *T { return &v }

// hookOn is a webhook calling s, for creates and updates of configmaps.
func hookOn(s *server, name string) Webhook {
	return Webhook{
		Name:                    name,
		ClientConfig:            ClientConfig{URL: ptr(s.URL + "/hook"), CABundle: s.ca},
		Rules:                   []Rule{{Operations: []string{"CREATE", "UPDATE"}, APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}},
		SideEffects:             ptr("None"),
		AdmissionReviewVersions: []string{"v1"},
	}
}

func configuration(name string, hooks ...Webhook) *Configuration {
	c := &Configuration{Webhooks: hooks}
	c.Metadata.Name = name
	return c
}

func newAttrs(op admission.Operation, labels map[string]any) *admission.Attributes {
	meta := map[string]any{"name": "cm", "namespace": "default"}
	if labels != nil {
		meta["labels"] = labels
	}
	return &admission.Attributes{Operation: op, Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: "default", Name: "cm",
		User:    &request.User{Name: "alice", UID: "u-1", Groups: []string{"devs", "system:authenticated"}, Extra: map[string][]string{"scopes": {"a"}}},
		Object:  map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": map[string]any{"k": "v"}},
		Options: map[string]any{"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"}}
}

func TestValidatingAnswers(t *testing.T) {
	tests := []struct {
		name     string
		answer   func(rv review) any
		policy   string
		wantCode int // 0: admitted
		wantMsg  string
	}{
		{name: "allowed", answer: func(rv review) any { return allow(rv, "") }},
		{name: "denied", answer: func(rv review) any { return deny(rv, 403, "no blue configmaps") }, wantCode: 403,
			wantMsg: `admission webhook "deny.example.com" denied the request: no blue configmaps`},
		{name: "denied without explanation", wantCode: 400, wantMsg: `admission webhook "deny.example.com" denied the request without explanation`,
			answer: func(rv review) any {
				return map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": map[string]any{"uid": rv.Request["uid"], "allowed": false}}
			}},
		{name: "garbage fails closed", answer: func(review) any { return []byte("<html>") }, wantCode: 500,
			wantMsg: `Internal error occurred: failed calling webhook "deny.example.com": failed to call webhook: couldn't get version/kind; json parse error: json: cannot unmarshal string into Go value of type struct`},
		{name: "YAML answer", answer: func(rv review) any {
			return []byte("apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\nresponse:\n  uid: " + rv.Request["uid"].(string) + "\n  allowed: false\n  status: {code: 403, message: nope}\n")
		}, wantCode: 403, wantMsg: `admission webhook "deny.example.com" denied the request: nope`},
		{name: "not even YAML", answer: func(review) any { return []byte("a: [") }, wantCode: 500, wantMsg: `failed calling webhook "deny.example.com": failed to call webhook: `},
		{name: "garbage ignored", answer: func(review) any { return []byte("<html>") }, policy: Ignore},
		{name: "wrong uid", answer: func(rv review) any { rv.Request["uid"] = "x"; return allow(rv, "") }, wantCode: 500,
			wantMsg: `Internal error occurred: failed calling webhook "deny.example.com": received invalid webhook response: expected response.uid=`},
		{name: "no response", answer: func(review) any {
			return map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}
		}, wantCode: 500,
			wantMsg: `Internal error occurred: failed calling webhook "deny.example.com": received invalid webhook response: webhook response was absent`},
		{name: "wrong kind", answer: func(rv review) any { m := allow(rv, ""); m["kind"] = "Pod"; return m }, wantCode: 500,
			wantMsg: `received invalid webhook response: expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got admission.k8s.io/v1, Kind=Pod`},
		{name: "validating patch", answer: func(rv review) any { return allow(rv, `[]`) }, wantCode: 500,
			wantMsg: `received invalid webhook response: validating webhook may not return response.patch`},
		{name: "huge body", answer: func(review) any { return []byte(strings.Repeat(" ", 11<<20)) }, wantCode: 500,
			wantMsg: `failed calling webhook "deny.example.com": failed to call webhook: the response is larger than 10485760 bytes`},
		{name: "huge body ignored", answer: func(review) any { return []byte(strings.Repeat(" ", 11<<20)) }, policy: Ignore},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.answer)
			d := New(Options{})
			defer d.Close()
			h := hookOn(s, "deny.example.com")
			if tt.policy != "" {
				h.FailurePolicy = &tt.policy
			}
			if err := d.Set(ValidatingKind, configuration("c", h)); err != nil {
				t.Fatal(err)
			}
			err := d.Validate(context.Background(), newAttrs(admission.Create, nil))
			checkErr(t, err, tt.wantCode, tt.wantMsg)
			if n := len(s.called()); n != 1 {
				t.Errorf("calls: got %d; want 1", n)
			}
		})
	}
}

func checkErr(t *testing.T, err error, code int, msg string) {
	t.Helper()
	var e *admission.Error
	switch {
	case code == 0 && err != nil:
		t.Errorf("got %v; want admitted", err)
	case code != 0 && !errors.As(err, &e):
		t.Errorf("got %v; want an *admission.Error", err)
	case code != 0 && (e.Code != code || !strings.Contains(e.Message, msg)):
		t.Errorf("got %d %q; want %d with %q", e.Code, e.Message, code, msg)
	}
}

func TestReviewRequest(t *testing.T) {
	s := newServer(t, func(rv review) any { return allow(rv, "") })
	d := New(Options{})
	defer d.Close()
	if err := d.Set(ValidatingKind, configuration("c", hookOn(s, "v.example.com"))); err != nil {
		t.Fatal(err)
	}
	a := newAttrs(admission.Update, nil)
	a.OldObject = map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cm"}}
	a.DryRun = true
	if err := d.Validate(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	calls := s.called()
	if len(calls) != 1 {
		t.Fatalf("calls: %d", len(calls))
	}
	rv := calls[0]
	req, _ := json.Marshal(rv.Request)
	var got struct {
		UID       string         `json:"uid"`
		Kind      map[string]any `json:"kind"`
		Resource  map[string]any `json:"resource"`
		Operation string         `json:"operation"`
		Name      string         `json:"name"`
		Namespace string         `json:"namespace"`
		UserInfo  map[string]any `json:"userInfo"`
		Object    map[string]any `json:"object"`
		OldObject map[string]any `json:"oldObject"`
		DryRun    bool           `json:"dryRun"`
		Options   map[string]any `json:"options"`
	}
	if err := json.Unmarshal(req, &got); err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		what      string
		got, want any
	}{
		{"apiVersion", rv.APIVersion, "admission.k8s.io/v1"},
		{"kind", rv.Kind, "AdmissionReview"},
		{"uid length", len(got.UID), 36},
		{"kind", got.Kind, map[string]any{"group": "", "version": "v1", "kind": "ConfigMap"}},
		{"resource", got.Resource, map[string]any{"group": "", "version": "v1", "resource": "configmaps"}},
		{"operation", got.Operation, "UPDATE"},
		{"name", got.Name, "cm"},
		{"namespace", got.Namespace, "default"},
		{"username", got.UserInfo["username"], "alice"},
		{"uid", got.UserInfo["uid"], "u-1"},
		{"groups", got.UserInfo["groups"], []any{"devs", "system:authenticated"}},
		{"extra", got.UserInfo["extra"], map[string]any{"scopes": []any{"a"}}},
		{"object data", got.Object["data"], map[string]any{"k": "v"}},
		{"old object", got.OldObject["metadata"], map[string]any{"name": "cm"}},
		{"dryRun", got.DryRun, true},
		{"options", got.Options["kind"], "CreateOptions"},
	}
	for _, c := range checks {
		if !equalJSON(c.got, c.want) {
			t.Errorf("%s: got %v; want %v", c.what, c.got, c.want)
		}
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestMutating(t *testing.T) {
	t.Run("patch applied", func(t *testing.T) {
		s := newServer(t, func(rv review) any {
			return allow(rv, `[{"op":"add","path":"/metadata/labels","value":{"team":"blue"}}]`)
		})
		d := New(Options{})
		defer d.Close()
		_ = d.Set(MutatingKind, configuration("m", hookOn(s, "label.example.com")))
		a := newAttrs(admission.Create, nil)
		if err := d.Admit(context.Background(), a); err != nil {
			t.Fatal(err)
		}
		if got := labelsOf(a.Object)["team"]; got != "blue" {
			t.Errorf("label: got %q; want blue", got)
		}
	})
	for _, tt := range []struct {
		name, patch, patchType string
		policy                 string
		wantCode               int
		wantMsg                string
	}{
		{name: "patch that fails to apply", patch: `[{"op":"replace","path":"/spec/missing","value":1}]`, patchType: "JSONPatch", wantCode: 500,
			wantMsg: "Internal error occurred: "},
		{name: "undecodable patch", patch: `{"not":"a patch"}`, patchType: "JSONPatch", wantCode: 500,
			wantMsg: `failed calling webhook "m.example.com": received undecodable patch in webhook response`},
		{name: "undecodable patch ignored", patch: `{"not":"a patch"}`, patchType: "JSONPatch", policy: Ignore},
		{name: "unsupported patch type", patch: `[{"op":"add","path":"/data/x","value":"y"}]`, patchType: "MergePatch", wantCode: 500, wantMsg: `unsupported patch type "MergePatch"`},
		{name: "patch without type", patch: `[]`, wantCode: 500, wantMsg: "webhook returned response.patch but not response.patchType"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, func(rv review) any {
				m := allow(rv, "")
				resp := m["response"].(map[string]any)
				resp["patch"] = []byte(tt.patch)
				if tt.patchType != "" {
					resp["patchType"] = tt.patchType
				}
				return m
			})
			d := New(Options{})
			defer d.Close()
			h := hookOn(s, "m.example.com")
			if tt.policy != "" {
				h.FailurePolicy = &tt.policy
			}
			_ = d.Set(MutatingKind, configuration("m", h))
			a := newAttrs(admission.Create, nil)
			before, _ := json.Marshal(a.Object)
			checkErr(t, d.Admit(context.Background(), a), tt.wantCode, tt.wantMsg)
			if after, _ := json.Marshal(a.Object); string(after) != string(before) {
				t.Errorf("object changed to %s", after)
			}
		})
	}
}

// TestReinvocation: a IfNeeded webhook is called again once a later
// webhook changed the object; a Never one is not.
func TestReinvocation(t *testing.T) {
	for _, policy := range []string{IfNeeded, Never} {
		t.Run(policy, func(t *testing.T) {
			first := newServer(t, func(rv review) any { return allow(rv, "") })
			second := newServer(t, func(rv review) any {
				return allow(rv, `[{"op":"add","path":"/metadata/labels","value":{"b":"2"}}]`)
			})
			d := New(Options{})
			defer d.Close()
			h1 := hookOn(first, "a.example.com")
			h1.ReinvocationPolicy = &policy
			_ = d.Set(MutatingKind, configuration("1-first", h1))
			_ = d.Set(MutatingKind, configuration("2-second", hookOn(second, "b.example.com")))
			a := newAttrs(admission.Create, nil)
			if err := d.Admit(context.Background(), a); err != nil {
				t.Fatal(err)
			}
			want := 1
			if policy == IfNeeded {
				want = 2
			}
			calls := first.called()
			if len(calls) != want {
				t.Fatalf("first webhook calls: got %d; want %d", len(calls), want)
			}
			if policy == IfNeeded {
				obj := calls[1].Request["object"].(map[string]any)
				if labelsOf(obj)["b"] != "2" {
					t.Errorf("reinvocation saw %v; want the second webhook's label", obj)
				}
			}
		})
	}
}

func TestMatching(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(h *Webhook)
		attrs  func(a *admission.Attributes)
		called bool
	}{
		{name: "matches", called: true},
		{name: "operation", attrs: func(a *admission.Attributes) { a.Operation = admission.Delete }},
		{name: "wildcard operation", edit: func(h *Webhook) { h.Rules[0].Operations = []string{"*"} }, attrs: func(a *admission.Attributes) { a.Operation = admission.Delete }, called: true},
		{name: "group", edit: func(h *Webhook) { h.Rules[0].APIGroups = []string{"apps"} }},
		{name: "resource", edit: func(h *Webhook) { h.Rules[0].Resources = []string{"secrets"} }},
		{name: "subresource not matched by resource", attrs: func(a *admission.Attributes) { a.Subresource = "status" }},
		{name: "subresource rule", edit: func(h *Webhook) { h.Rules[0].Resources = []string{"configmaps/status"} }, attrs: func(a *admission.Attributes) { a.Subresource = "status" }, called: true},
		{name: "wildcard subresource", edit: func(h *Webhook) { h.Rules[0].Resources = []string{"*/*"} }, attrs: func(a *admission.Attributes) { a.Subresource = "status" }, called: true},
		{name: "cluster scope", edit: func(h *Webhook) { h.Rules[0].Scope = ptr("Cluster") }},
		{name: "namespaced scope", edit: func(h *Webhook) { h.Rules[0].Scope = ptr("Namespaced") }, called: true},
		{name: "object selector", edit: func(h *Webhook) { h.ObjectSelector = selector("color", "blue") }},
		{name: "object selector matches", edit: func(h *Webhook) { h.ObjectSelector = selector("color", "blue") },
			attrs: func(a *admission.Attributes) {
				a.Object["metadata"].(map[string]any)["labels"] = map[string]any{"color": "blue"}
			}, called: true},
		{name: "object selector on old object", edit: func(h *Webhook) { h.ObjectSelector = selector("color", "blue") },
			attrs: func(a *admission.Attributes) {
				a.Operation = admission.Update
				a.OldObject = map[string]any{"metadata": map[string]any{"labels": map[string]any{"color": "blue"}}}
			}, called: true},
		{name: "namespace selector", edit: func(h *Webhook) { h.NamespaceSelector = selector("env", "prod") }},
		{name: "namespace selector matches", edit: func(h *Webhook) { h.NamespaceSelector = selector("env", "dev") }, called: true},
		{name: "exact version", edit: func(h *Webhook) { h.MatchPolicy = ptr(Exact); h.Rules[0].APIVersions = []string{"v2"} }},
		{name: "equivalent version", edit: func(h *Webhook) { h.Rules[0].APIVersions = []string{"v2"} }, called: true},
		{name: "configuration kinds are exempt", edit: func(h *Webhook) { h.Rules[0].APIGroups = []string{"*"}; h.Rules[0].Resources = []string{"*"} },
			attrs: func(a *admission.Attributes) {
				a.Group, a.Kind, a.Resource, a.Namespace = "admissionregistration.k8s.io", ValidatingKind, "validatingwebhookconfigurations", ""
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, func(rv review) any { return allow(rv, "") })
			d := New(Options{
				NamespaceLabels: func(_ context.Context, name string) (map[string]string, error) {
					return map[string]string{"env": "dev"}, nil
				},
				Equivalents: func(group, resource string) []Version {
					return []Version{{"v1", "ConfigMap"}, {"v2", "ConfigMap"}}
				},
			})
			defer d.Close()
			h := hookOn(s, "v.example.com")
			if tt.edit != nil {
				tt.edit(&h)
			}
			_ = d.Set(ValidatingKind, configuration("c", h))
			a := newAttrs(admission.Create, nil)
			if tt.attrs != nil {
				tt.attrs(a)
			}
			if err := d.Validate(context.Background(), a); err != nil {
				t.Fatal(err)
			}
			calls := s.called()
			if got := len(calls) == 1; got != tt.called {
				t.Errorf("called: got %v; want %v", got, tt.called)
			}
			if tt.name == "equivalent version" && len(calls) == 1 {
				if v := calls[0].Request["kind"].(map[string]any)["version"]; v != "v2" {
					t.Errorf("equivalent call's kind version: got %v; want v2", v)
				}
				if v := calls[0].Request["object"].(map[string]any)["apiVersion"]; v != "v2" {
					t.Errorf("equivalent call's object apiVersion: got %v; want v2", v)
				}
			}
		})
	}
}

func selector(k, v string) *LabelSelector {
	return &LabelSelector{MatchLabels: map[string]string{k: v}}
}

func TestDryRun(t *testing.T) {
	for _, tt := range []struct {
		sideEffects string
		wantCode    int
	}{{"None", 0}, {"NoneOnDryRun", 0}, {"Some", 400}, {"Unknown", 400}} {
		t.Run(tt.sideEffects, func(t *testing.T) {
			s := newServer(t, func(rv review) any { return allow(rv, "") })
			d := New(Options{})
			defer d.Close()
			h := hookOn(s, "v.example.com")
			h.SideEffects = &tt.sideEffects
			h.FailurePolicy = ptr(Ignore) // a dry-run refusal is not a failed call
			_ = d.Set(ValidatingKind, configuration("c", h))
			a := newAttrs(admission.Create, nil)
			a.DryRun = true
			checkErr(t, d.Validate(context.Background(), a), tt.wantCode, `admission webhook "v.example.com" does not support dry run`)
		})
	}
}

// TestValidatingConcurrently: two validating webhooks are both called
// before either answers.
func TestValidatingConcurrently(t *testing.T) {
	var arrived sync.WaitGroup
	arrived.Add(2)
	release := make(chan struct{})
	go func() { arrived.Wait(); close(release) }()
	handler := func(rv review) any {
		arrived.Done()
		<-release
		return allow(rv, "")
	}
	s1, s2 := newServer(t, handler), newServer(t, handler)
	d := New(Options{})
	defer d.Close()
	_ = d.Set(ValidatingKind, configuration("c", hookOn(s1, "a.example.com"), hookOn(s2, "b.example.com")))
	if err := d.Validate(context.Background(), newAttrs(admission.Create, nil)); err != nil {
		t.Fatal(err)
	}
}

// TestFailures: a server down, a server that hangs past timeoutSeconds,
// by failure policy; no goroutine is left behind.
func TestFailures(t *testing.T) {
	hang := make(chan struct{})
	hanging := newServer(t, func(rv review) any { <-hang; return allow(rv, "") })
	down := newServer(t, func(rv review) any { return allow(rv, "") })
	down.Close()
	var dispatchers []*Dispatcher
	for _, tt := range []struct {
		name     string
		s        *server
		policy   string
		wantCode int
		wantMsg  string
	}{
		{"down, Fail", down, Fail, 500, `Internal error occurred: failed calling webhook "f.example.com": failed to call webhook: Post "` + down.URL + `/hook?timeout=1s": dial tcp`},
		{"down, Ignore", down, Ignore, 0, ""},
		{"timeout, Fail", hanging, Fail, 500, `Internal error occurred: failed calling webhook "f.example.com": failed to call webhook: Post "` + hanging.URL + `/hook?timeout=1s": context deadline exceeded`},
		{"timeout, Ignore", hanging, Ignore, 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, kind := range []string{MutatingKind, ValidatingKind} {
				d := New(Options{})
				h := hookOn(tt.s, "f.example.com")
				h.FailurePolicy, h.TimeoutSeconds = &tt.policy, ptr(int32(1))
				_ = d.Set(kind, configuration("c", h))
				a := newAttrs(admission.Create, nil)
				err := d.Validate(context.Background(), a)
				if kind == MutatingKind {
					err = d.Admit(context.Background(), a)
				}
				checkErr(t, err, tt.wantCode, tt.wantMsg)
				dispatchers = append(dispatchers, d)
			}
		})
	}
	// While the hanging server still holds its requests, no goroutine of
	// the client side is left: not the dispatcher's (each call's ended
	// with it), not a connection's once the dispatchers are closed (a
	// connection whose request was cancelled turns idle once the server
	// acknowledges the reset, so Close is repeated until then).
	clientSide := func() string {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		for _, g := range strings.Split(stacks, "\n\n") {
			if strings.Contains(g, "webhook.(*Dispatcher)") || strings.Contains(g, "http2ClientConn") || strings.Contains(g, "persistConn") {
				return g
			}
		}
		return ""
	}
	deadline := time.Now().Add(10 * time.Second)
	for clientSide() != "" && time.Now().Before(deadline) {
		for _, d := range dispatchers {
			d.Close()
		}
		time.Sleep(10 * time.Millisecond)
	}
	if g := clientSide(); g != "" {
		t.Errorf("a client goroutine is left after the calls:\n%s", g)
	}
	close(hang)
}

func TestServiceReference(t *testing.T) {
	s := newServer(t, func(rv review) any { return allow(rv, "") })
	u, _ := url.Parse(s.URL)
	for _, tt := range []struct {
		name     string
		resolve  func(context.Context, ServiceReference) (*url.URL, error)
		wantCode int
		wantMsg  string
	}{
		{"resolved", func(_ context.Context, ref ServiceReference) (*url.URL, error) {
			if ref.Namespace != "system" || ref.Name != "hooks" || *ref.Port != 443 {
				return nil, errors.New("unexpected reference")
			}
			return &url.URL{Scheme: "https", Host: u.Host}, nil
		}, 0, ""},
		{"no resolver", nil, 500, `failed calling webhook "svc.example.com": could not get REST client: no service resolver for service system/hooks`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := New(Options{ResolveService: tt.resolve})
			defer d.Close()
			h := hookOn(s, "svc.example.com")
			h.ClientConfig.URL = nil
			h.ClientConfig.Service = &ServiceReference{Namespace: "system", Name: "hooks", Path: ptr("/validate")}
			_ = d.Set(ValidatingKind, configuration("c", h))
			checkErr(t, d.Validate(context.Background(), newAttrs(admission.Create, nil)), tt.wantCode, tt.wantMsg)
		})
	}
}

func TestSetAndDelete(t *testing.T) {
	s := newServer(t, func(rv review) any { return deny(rv, 403, "no") })
	d := New(Options{})
	defer d.Close()
	if !d.Empty() {
		t.Fatal("new dispatcher not empty")
	}
	_ = d.Set(ValidatingKind, configuration("c", hookOn(s, "v.example.com")))
	if err := d.Validate(context.Background(), newAttrs(admission.Create, nil)); err == nil {
		t.Error("got admitted; want the webhook's denial")
	}
	d.Delete(ValidatingKind, "c")
	if err := d.Validate(context.Background(), newAttrs(admission.Create, nil)); err != nil || !d.Empty() {
		t.Errorf("after Delete: got %v, empty %v; want admitted by no webhook", err, d.Empty())
	}
	if err := d.Set("Pod", configuration("c")); err == nil {
		t.Error("Set of an unknown kind: got nil error")
	}
	h := hookOn(s, "v.example.com")
	h.MatchConditions = []MatchCondition{{Name: "x", Expression: "true"}}
	if errs := d.Check(configuration("c", h)); len(errs) != 1 || errs[0].Detail != ErrNoConditions.Error() || errs[0].Field != "webhooks[0].matchConditions" {
		t.Errorf("Check without a condition compiler: got %v; want ErrNoConditions", errs)
	}
}

// TestAdmitRounds: a webhook (IfNeeded) that changed the object itself
// is called again in round 2 only if something else changed the object
// between the rounds (kube's IsOutputChangedSinceLastWebhookInvocation).
func TestAdmitRounds(t *testing.T) {
	for _, between := range []bool{false, true} {
		t.Run(fmt.Sprintf("changed between rounds %v", between), func(t *testing.T) {
			s := newServer(t, func(rv review) any {
				return allow(rv, `[{"op":"add","path":"/metadata/annotations","value":{"seen":"yes"}}]`)
			})
			d := New(Options{})
			defer d.Close()
			h := hookOn(s, "a.example.com")
			h.ReinvocationPolicy = ptr(IfNeeded)
			_ = d.Set(MutatingKind, configuration("m", h))
			a := newAttrs(admission.Create, nil)
			var r Reinvocation
			if err := d.AdmitRound(context.Background(), a, &r); err != nil || !r.Again() {
				t.Fatalf("round 1: %v, again %v; want a change", err, r.Again())
			}
			if between {
				a.Object["data"] = map[string]any{"k": "changed by a Go hook"}
			}
			if err := d.AdmitRound(context.Background(), a, &r); err != nil {
				t.Fatal(err)
			}
			want := 1
			if between {
				want = 2
			}
			if got := len(s.called()); got != want {
				t.Errorf("calls: got %d; want %d", got, want)
			}
		})
	}
}
