package registry_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func strs(v any) []string {
	l, _ := v.([]any)
	out := make([]string, len(l))
	for i, x := range l {
		out[i], _ = x.(string)
	}
	return out
}

func TestNamespaces(t *testing.T) {
	s := newServer(t)
	def := s.must(200, "GET", "/api/v1/namespaces/default", nil)
	if str(def, "status.phase") != "Active" {
		t.Errorf("default namespace: got %v; want Active", def)
	}
	if r := s.do("DELETE", "/api/v1/namespaces/default", nil); r.code != 403 {
		t.Errorf("delete default: got %d; want 403 (it may not be deleted)", r.code)
	}
	if r := s.do("POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "a.b"}}); r.code != 422 {
		t.Errorf("namespace name a.b: got %d; want 422 (DNS-1123 label)", r.code)
	}
	s.must(201, "POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "team"}})
	team := "/apis/example.com/v1/namespaces/team/widgets"
	s.must(201, "POST", team, widget("plain", nil, nil))
	kept := widget("kept", nil, nil)
	kept["metadata"].(map[string]any)["finalizers"] = []string{"example.com/hold"}
	s.must(201, "POST", team, kept)
	s.must(201, "POST", "/api/v1/namespaces/team/configmaps", map[string]any{"metadata": map[string]any{"name": "cfg"}, "data": map[string]any{"k": "v"}})

	ns := s.must(200, "DELETE", "/api/v1/namespaces/team", nil)
	if str(ns, "status.phase") != "Terminating" || str(ns, "metadata.deletionTimestamp") == "" {
		t.Fatalf("namespace delete: got %v; want Terminating with deletionTimestamp", ns)
	}
	if r := s.do("GET", team+"/plain", nil); r.code != 404 {
		t.Errorf("object in deleted namespace: got %d; want 404", r.code)
	}
	if r := s.do("GET", "/api/v1/namespaces/team/configmaps/cfg", nil); r.code != 404 {
		t.Errorf("configmap in deleted namespace: got %d; want 404", r.code)
	}
	// Still terminating while an object with a finalizer remains.
	if got := s.must(200, "GET", "/api/v1/namespaces/team", nil); str(got, "status.phase") != "Terminating" {
		t.Errorf("namespace with a remaining object: got %v; want Terminating", got)
	}
	// spec.finalizers are the namespace controller's (the finalize
	// subresource): an update keeps them, and the namespace.
	got := s.must(200, "GET", "/api/v1/namespaces/team", nil)
	got["spec"] = map[string]any{"finalizers": []any{}}
	if got := s.must(200, "PUT", "/api/v1/namespaces/team", got); !slices.Equal(strs(path(got, "spec.finalizers")), []string{"kubernetes"}) {
		t.Errorf("update of spec.finalizers: got %v; want [kubernetes] kept", path(got, "spec.finalizers"))
	}
	r := s.do("POST", team, widget("late", nil, nil))
	if r.code != 403 || r.obj(t)["reason"] != "Forbidden" {
		t.Errorf("create in terminating namespace: got %d %s; want 403", r.code, r.body)
	}
	s.must(200, "PATCH", team+"/kept", `{"metadata":{"finalizers":null}}`, "Content-Type", "application/merge-patch+json")
	if r := s.do("GET", "/api/v1/namespaces/team", nil); r.code != 404 {
		t.Errorf("namespace after its last object went: got %d %s; want 404", r.code, r.body)
	}
	s.must(201, "POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "team"}})
	s.must(201, "POST", team, widget("plain", nil, nil))
}

// A namespace deleted with a propagation policy gets the garbage
// collector's finalizer, as kube's, and still goes once empty and
// collected.
func TestNamespaceDeletePropagation(t *testing.T) {
	for _, policy := range []string{"Orphan", "Foreground", "Background"} {
		t.Run(policy, func(t *testing.T) {
			s := newGCServer(t)
			s.must(201, "POST", "/api/v1/namespaces", map[string]any{"metadata": map[string]any{"name": "team"}})
			s.must(201, "POST", "/api/v1/namespaces/team/configmaps", map[string]any{"metadata": map[string]any{"name": "cfg"}})
			s.do("DELETE", "/api/v1/namespaces/team?propagationPolicy="+policy, nil)
			s.gone(t, "/api/v1/namespaces/team")
			s.gone(t, "/api/v1/namespaces/team/configmaps/cfg")
		})
	}
}

// managedFields of namespace writes, as kube records them: the creator
// owns the finalizers it names, not spec itself (a typed Namespace has an
// empty spec); a name made from generateName is labelled after tracking
// (kube's Canonicalize), so the label is nobody's; PUT .../finalize
// changes spec.finalizers alone and keeps the status.
func TestNamespaceWrites(t *testing.T) {
	s := newServer(t)
	fields := func(ns map[string]any) string {
		mf, _ := path(ns, "metadata.managedFields").([]any)
		var out []string
		for _, e := range mf {
			b, _ := json.Marshal(e.(map[string]any)["fieldsV1"])
			out = append(out, string(b))
		}
		return strings.Join(out, " ")
	}
	tests := []struct {
		name   string
		method string
		path   string
		body   map[string]any
		code   int
		fields string
		labels string
	}{
		{"finalizers named", "POST", "/api/v1/namespaces",
			map[string]any{"metadata": map[string]any{"name": "a"}, "spec": map[string]any{"finalizers": []any{"example.com/f"}}}, 201,
			`{"f:metadata":{"f:labels":{".":{},"f:kubernetes.io/metadata.name":{}}},"f:spec":{"f:finalizers":{}}}`, "a"},
		{"empty finalizers are none", "POST", "/api/v1/namespaces",
			map[string]any{"metadata": map[string]any{"name": "b"}, "spec": map[string]any{"finalizers": []any{}}}, 201,
			`{"f:metadata":{"f:labels":{".":{},"f:kubernetes.io/metadata.name":{}}}}`, "b"},
		{"generateName", "POST", "/api/v1/namespaces",
			map[string]any{"metadata": map[string]any{"generateName": "gen-"}}, 201,
			`{"f:metadata":{"f:generateName":{}}}`, "gen-"},
		{"finalize", "PUT", "/api/v1/namespaces/a/finalize",
			map[string]any{"metadata": map[string]any{"name": "a"}, "spec": map[string]any{"finalizers": []any{}}, "status": map[string]any{"phase": "Terminating"}}, 200,
			// The finalizers removed are nobody's now; the remover owns nothing.
			`{"f:metadata":{"f:labels":{".":{},"f:kubernetes.io/metadata.name":{}}}}`, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := s.must(tt.code, tt.method, tt.path, tt.body)
			if got := fields(ns); got != tt.fields {
				t.Errorf("managedFields %s; want %s", got, tt.fields)
			}
			labels, _ := path(ns, "metadata.labels").(map[string]any)
			if got, _ := labels["kubernetes.io/metadata.name"].(string); !strings.HasPrefix(got, tt.labels) || got != str(ns, "metadata.name") {
				t.Errorf("name label %q; want the name %q", got, str(ns, "metadata.name"))
			}
			if str(ns, "status.phase") != "Active" {
				t.Errorf("status.phase %q; want Active", str(ns, "status.phase"))
			}
		})
	}
	if a := s.must(200, "GET", "/api/v1/namespaces/a", nil); path(a, "spec.finalizers") != nil {
		t.Errorf("after finalize: spec %v; want no finalizers", path(a, "spec"))
	}
	if r := s.do("GET", "/api/v1/namespaces/a/finalize", nil); r.code != 405 {
		t.Errorf("GET finalize: %d; want 405 (update alone)", r.code)
	}
}
