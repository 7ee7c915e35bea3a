package registry_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

// notes is a resource of another group stored with the core group's
// configmaps (Resource.StorageGroup), its "notes" being their "data", as
// kube's events.k8s.io Events are core Events.
func notes() *registry.Resource {
	rename := func(o registry.Object, from, to string) {
		if v, ok := o[from]; ok {
			o[to] = v
			delete(o, from)
		}
	}
	return &registry.Resource{Group: "example.com", Version: "v1", Kind: "ConfigMap", Plural: "configmaps", Namespaced: true,
		StorageGroup: "core", StorageVersion: "v1",
		Convert: func(_ context.Context, objs []registry.Object, apiVersion string) ([]registry.Object, error) {
			for _, o := range objs {
				if apiVersion == "v1" {
					rename(o, "notes", "data")
				} else {
					rename(o, "data", "notes")
				}
				o["apiVersion"] = apiVersion
			}
			return objs, nil
		}}
}

// Two groups' resources share one store with StorageGroup: each reads,
// lists and watches what the other wrote, converted.
func TestStorageGroup(t *testing.T) {
	s := newServer(t, notes())
	const core, other = "/api/v1/namespaces/default/configmaps", "/apis/example.com/v1/namespaces/default/configmaps"
	s.must(201, "POST", other, map[string]any{"metadata": map[string]any{"name": "a"}, "notes": map[string]any{"k": "v"}})
	s.must(201, "POST", core, map[string]any{"metadata": map[string]any{"name": "b"}, "data": map[string]any{"k": "w"}})
	for _, tt := range []struct{ path, field, want string }{
		{core + "/a", "data.k", "v"},
		{other + "/a", "notes.k", "v"},
		{other + "/b", "notes.k", "w"},
	} {
		if got := path(s.must(200, "GET", tt.path, nil), tt.field); got != tt.want {
			t.Errorf("GET %s: %s %v; want %q", tt.path, tt.field, got, tt.want)
		}
	}
	for _, p := range []string{core, other} {
		if items, _ := s.must(200, "GET", p, nil)["items"].([]any); len(items) != 2 {
			t.Errorf("GET %s: %d items; want 2", p, len(items))
		}
	}
	// The stored object is core's: its storage key and apiVersion.
	o, err := s.store.Get(context.Background(), "/core/configmaps/default/a", storage.GetOptions{})
	if err != nil {
		t.Fatalf("stored under core's prefix: %v", err)
	}
	if !strings.HasPrefix(string(o.Value), `{"apiVersion":"v1",`) || !strings.Contains(string(o.Value), `"data":{"k":"v"}`) {
		t.Errorf("stored %s; want a core v1 ConfigMap", o.Value)
	}
}

func TestStorageGroupNeedsStorageVersion(t *testing.T) {
	res := notes()
	res.StorageVersion = ""
	r, err := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Register(res); err == nil || !strings.Contains(err.Error(), "StorageGroup needs StorageVersion") {
		t.Errorf("Register: %v; want StorageGroup needs StorageVersion", err)
	}
}

// A kind with Strategy.OrphanByDefault orphans its dependents when a
// delete names no policy, with its Warning; DELETE of the collection
// answers the objects as listed.
func TestOrphanByDefault(t *testing.T) {
	res := configMaps()
	res.Group, res.Plural, res.Kind = "example.com", "orphans", "Orphan"
	res.Strategy.OrphanByDefault, res.Strategy.OrphanWarning = true, "dependents stay"
	s := newServer(t, res)
	const p = "/apis/example.com/v1/namespaces/default/orphans"
	for _, tt := range []struct {
		name, query string
		warn        bool
		finalizers  []any
	}{
		{"a", "", true, []any{"orphan"}},
		{"b", "?propagationPolicy=Background", false, nil},
		{"c", "?propagationPolicy=Foreground", false, []any{"foregroundDeletion"}},
	} {
		s.must(201, "POST", p, map[string]any{"metadata": map[string]any{"name": tt.name}})
		r := s.do("DELETE", p+"/"+tt.name+tt.query, nil)
		if r.code != 200 {
			t.Fatalf("DELETE %s: %d", tt.name, r.code)
		}
		if got := strings.Contains(strings.Join(r.header.Values("Warning"), ","), "dependents stay"); got != tt.warn {
			t.Errorf("DELETE %s%s: warnings %q; want the warning %v", tt.name, tt.query, r.header.Values("Warning"), tt.warn)
		}
		fs, _ := path(r.obj(t), "metadata.finalizers").([]any)
		if len(fs) != len(tt.finalizers) || (len(fs) > 0 && fs[0] != tt.finalizers[0]) {
			t.Errorf("DELETE %s%s: finalizers %v; want %v", tt.name, tt.query, fs, tt.finalizers)
		}
	}
	s.must(201, "POST", p, map[string]any{"metadata": map[string]any{"name": "d"}})
	r := s.do("DELETE", p+"?labelSelector=", nil)
	if !strings.Contains(strings.Join(r.header.Values("Warning"), ","), "dependents stay") {
		t.Errorf("DELETE of the collection: warnings %q; want the kind's", r.header.Values("Warning"))
	}
	for _, it := range r.obj(t)["items"].([]any) {
		if path(it.(map[string]any), "metadata.name") == "d" && path(it.(map[string]any), "metadata.deletionTimestamp") != nil {
			t.Errorf("DELETE of the collection answered %v; want d as listed", it)
		}
	}
}
