package registry_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/registry/admission"
	"github.com/kapi-dev/kapi/storage/memory"
)

// hookServer is a TLS webhook server: it labels objects (mutating path
// /mutate) and denies those labelled color=blue (/validate).
func hookServer(t *testing.T) (url string, ca []byte) {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rv struct {
			Request struct {
				UID    string `json:"uid"`
				Object struct {
					Metadata struct {
						Labels map[string]string `json:"labels"`
					} `json:"metadata"`
				} `json:"object"`
			} `json:"request"`
		}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &rv)
		resp := map[string]any{"uid": rv.Request.UID, "allowed": true}
		switch r.URL.Path {
		case "/mutate":
			resp["patch"] = []byte(`[{"op":"add","path":"/metadata/annotations","value":{"mutated":"yes"}}]`)
			resp["patchType"] = "JSONPatch"
			resp["warnings"] = []string{"mutated by a webhook"}
		case "/badlabel":
			resp["patch"] = []byte(`[{"op":"add","path":"/metadata/labels","value":{"bad key!":"x"}}]`)
			resp["patchType"] = "JSONPatch"
		case "/validate":
			if rv.Request.Object.Metadata.Labels["color"] == "blue" {
				resp["allowed"] = false
				resp["status"] = map[string]any{"code": 403, "reason": "Forbidden", "message": "blue widgets are not allowed"}
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": resp})
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

func webhookConfiguration(kind, name, url string, ca []byte, extra map[string]any) map[string]any {
	h := map[string]any{
		"name":                    name + ".example.com",
		"clientConfig":            map[string]any{"url": url, "caBundle": ca},
		"rules":                   []any{map[string]any{"operations": []any{"CREATE", "UPDATE"}, "apiGroups": []any{"example.com"}, "apiVersions": []any{"v1"}, "resources": []any{"widgets"}}},
		"sideEffects":             "None",
		"admissionReviewVersions": []any{"v1"},
	}
	for k, v := range extra {
		h[k] = v
	}
	return map[string]any{"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": map[string]any{"name": name}, "webhooks": []any{h}}
}

const (
	mutatingPath   = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
	validatingPath = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
)

func TestWebhookConfigurations(t *testing.T) {
	s := newServer(t)
	url, ca := hookServer(t)

	// Defaults are kube's.
	m := s.must(201, "POST", mutatingPath, webhookConfiguration("MutatingWebhookConfiguration", "annotate", url+"/mutate", ca, nil))
	hook := path(m, "webhooks").([]any)[0].(map[string]any)
	for field, want := range map[string]any{"failurePolicy": "Fail", "matchPolicy": "Equivalent", "reinvocationPolicy": "Never",
		"timeoutSeconds": json.Number("10"), "namespaceSelector": map[string]any{}, "objectSelector": map[string]any{}} {
		if got := hook[field]; !equalJSON(got, want) {
			t.Errorf("default %s: got %v; want %v", field, got, want)
		}
	}
	if got := str(hook["rules"].([]any)[0].(map[string]any), "scope"); got != "*" {
		t.Errorf("default rule scope: got %q; want *", got)
	}
	s.must(201, "POST", validatingPath, webhookConfiguration("ValidatingWebhookConfiguration", "no-blue", url+"/validate", ca, nil))

	// Effective for the next request: mutated, then validated.
	r := s.do("POST", widgetsPath, widget("green", map[string]string{"color": "green"}, nil))
	if r.code != 201 || str(r.obj(t), "metadata.annotations.mutated") != "yes" {
		t.Errorf("create: got %d %s; want 201 with the webhook's annotation", r.code, r.body)
	}
	if w := r.header.Get("Warning"); !strings.Contains(w, "mutated by a webhook") {
		t.Errorf("Warning header: got %q; want the webhook's warning", w)
	}
	r = s.do("POST", widgetsPath, widget("blue", map[string]string{"color": "blue"}, nil))
	if st := r.obj(t); r.code != 403 || st["message"] != `admission webhook "no-blue.example.com" denied the request: blue widgets are not allowed` || st["reason"] != "Forbidden" {
		t.Errorf("denied create: got %d %s", r.code, r.body)
	}

	// Gone with the configuration, for the next request.
	s.must(200, "DELETE", validatingPath+"/no-blue", nil)
	s.must(201, "POST", widgetsPath, widget("blue", map[string]string{"color": "blue"}, nil))

	// A webhook's patch is validated as the request's object is.
	s.must(201, "POST", mutatingPath, webhookConfiguration("MutatingWebhookConfiguration", "z-bad-label", url+"/badlabel", ca, nil))
	r = s.do("POST", widgetsPath, widget("patched-invalid", nil, nil))
	if msg, _ := r.obj(t)["message"].(string); r.code != 422 || !strings.Contains(msg, `metadata.labels: Invalid value: "bad key!"`) {
		t.Errorf("create through an invalid patch: got %d %s; want 422 on the patched label", r.code, r.body)
	}
	s.must(404, "GET", widgetsPath+"/patched-invalid", nil)
}

func TestWebhookConfigurationValidation(t *testing.T) {
	s := newServer(t)
	for _, tt := range []struct {
		name  string
		extra map[string]any
		want  string
	}{
		{"sideEffects Some", map[string]any{"sideEffects": "Some"}, `webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"`},
		{"timeout", map[string]any{"timeoutSeconds": 0}, `webhooks[0].timeoutSeconds: Invalid value: 0: the timeout value must be between 1 and 30 seconds`},
		{"matchConditions without CEL", map[string]any{"matchConditions": []any{map[string]any{"name": "x", "expression": "true"}}},
			`matchConditions need a CEL compiler`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do("POST", validatingPath, webhookConfiguration("ValidatingWebhookConfiguration", "bad", "https://h/x", nil, tt.extra))
			if msg, _ := r.obj(t)["message"].(string); r.code != 422 || !strings.Contains(msg, tt.want) {
				t.Errorf("got %d %s; want 422 with %q", r.code, r.body, tt.want)
			}
		})
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestWebhookReinvocation: when a webhook changes the object, the Go
// mutating hooks run again, as kube reinvokes its admission plugins; a
// webhook that changes nothing leaves them at one call.
func TestWebhookReinvocation(t *testing.T) {
	url, ca := hookServer(t)
	for _, tt := range []struct {
		path      string
		wantCalls int
	}{{"/mutate", 2}, {"/validate", 1}} { // /validate allows without a patch
		t.Run(tt.path, func(t *testing.T) {
			var calls atomic.Int64
			hook := mutator(func(_ context.Context, a *admission.Attributes) error {
				if a.Resource == "widgets" {
					calls.Add(1)
				}
				return nil
			})
			reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{}), Admission: admission.Chain{Mutating: []admission.Mutator{hook}}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { reg.Close() })
			if err := reg.Register(widgets()); err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(reg)
			t.Cleanup(srv.Close)
			s := &server{t: t, reg: reg, url: srv.URL}
			s.must(201, "POST", mutatingPath, webhookConfiguration("MutatingWebhookConfiguration", "m", url+tt.path, ca, nil))
			s.must(201, "POST", widgetsPath, widget("w", nil, nil))
			if got := calls.Load(); got != int64(tt.wantCalls) {
				t.Errorf("Go hook calls: got %d; want %d", got, tt.wantCalls)
			}
		})
	}
}
