package registry_test

import (
	"slices"
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
