package registry_test

import (
	"slices"
	"testing"
)

const (
	configMapsPath = "/api/v1/namespaces/default/configmaps"
	namespacesPath = "/api/v1/namespaces"
)

// ownedBy returns an ownerReferences entry for owner (a decoded object).
func ownedBy(owner map[string]any, block bool) map[string]any {
	ref := map[string]any{"apiVersion": str(owner, "apiVersion"), "kind": str(owner, "kind"),
		"name": str(owner, "metadata.name"), "uid": str(owner, "metadata.uid")}
	if block {
		ref["blockOwnerDeletion"] = true
	}
	return ref
}

func configMap(name string, refs ...map[string]any) map[string]any {
	meta := map[string]any{"name": name}
	if len(refs) > 0 {
		meta["ownerReferences"] = refs
	}
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": map[string]any{"k": "v"}}
}

func ownedWidget(name string, finalizers []string, refs ...map[string]any) map[string]any {
	w := widget(name, nil, nil)
	meta := w["metadata"].(map[string]any)
	meta["ownerReferences"] = refs
	if finalizers != nil {
		meta["finalizers"] = finalizers
	}
	return w
}

func (s *server) gone(t *testing.T, path string) {
	t.Helper()
	eventually(t, path+" to be deleted", func() bool { return s.do("GET", path, nil).code == 404 })
}

// DEL-3: dependents of a deleted owner go (Background, the default), are
// orphaned (Orphan), or go first (Foreground), across resources.
func TestGCPropagation(t *testing.T) {
	tests := []struct {
		policy string // "" for the default
		orphan bool   // dependents stay, without the reference
	}{
		{"", false},
		{"Background", false},
		{"Orphan", true},
		{"Foreground", false},
	}
	for _, tt := range tests {
		t.Run("policy "+tt.policy, func(t *testing.T) {
			s := newGCServer(t)
			owner := s.must(201, "POST", configMapsPath, configMap("owner"))
			s.must(201, "POST", widgetsPath, ownedWidget("dep-w", nil, ownedBy(owner, true)))
			s.must(201, "POST", configMapsPath, configMap("dep-cm", ownedBy(owner, false)))
			var body any
			if tt.policy != "" {
				body = map[string]any{"propagationPolicy": tt.policy}
			}
			s.must(200, "DELETE", configMapsPath+"/owner", body)
			s.gone(t, configMapsPath+"/owner")
			for _, p := range []string{widgetsPath + "/dep-w", configMapsPath + "/dep-cm"} {
				if !tt.orphan {
					s.gone(t, p)
					continue
				}
				got := s.must(200, "GET", p, nil)
				if refs := path(got, "metadata.ownerReferences"); refs != nil {
					t.Errorf("%s: ownerReferences: got %v; want none (orphaned)", p, refs)
				}
			}
		})
	}
}

// DEL-3: in the foreground, a blocking dependent that has finalizers
// keeps its owner (with deletionTimestamp and foregroundDeletion) until
// it goes.
func TestGCForegroundWaitsForBlockingDependents(t *testing.T) {
	s := newGCServer(t)
	owner := s.must(201, "POST", widgetsPath, widget("owner", nil, nil))
	s.must(201, "POST", widgetsPath, ownedWidget("blocker", []string{holdFinalizer}, ownedBy(owner, true)))
	s.must(201, "POST", configMapsPath, configMap("free", ownedBy(owner, false)))

	got := s.must(200, "DELETE", widgetsPath+"/owner", map[string]any{"propagationPolicy": "Foreground"})
	if f := finalizers(got); !slices.Equal(f, []string{"foregroundDeletion"}) {
		t.Fatalf("owner finalizers: got %v; want [foregroundDeletion]", f)
	}
	eventually(t, "the blocking dependent to be marked for deletion", func() bool {
		return str(s.must(200, "GET", widgetsPath+"/blocker", nil), "metadata.deletionTimestamp") != ""
	})
	s.gone(t, configMapsPath+"/free")
	// The owner waits for the blocker, whatever the collector does meanwhile.
	o := s.must(200, "GET", widgetsPath+"/owner", nil)
	if str(o, "metadata.deletionTimestamp") == "" || !slices.Equal(finalizers(o), []string{"foregroundDeletion"}) {
		t.Fatalf("owner while a blocking dependent remains: %v; want it deleting, with foregroundDeletion", o)
	}
	s.must(200, "PATCH", widgetsPath+"/blocker", `{"metadata":{"finalizers":null}}`, "Content-Type", "application/merge-patch+json")
	s.gone(t, widgetsPath+"/blocker")
	s.gone(t, widgetsPath+"/owner")
}

// DEL-3: owners are resolved by uid, in the dependent's namespace for
// namespaced kinds; unresolvable references keep the dependent.
func TestGCOwnerResolution(t *testing.T) {
	s := newGCServer(t)
	owner := s.must(201, "POST", configMapsPath, configMap("owner"))
	ns := s.must(201, "POST", namespacesPath, map[string]any{"metadata": map[string]any{"name": "other"}})

	stale := ownedBy(owner, false)
	stale["uid"] = "00000000-0000-0000-0000-000000000000" // a previous owner of the same name
	unknown := map[string]any{"apiVersion": "nowhere.io/v1", "kind": "Ghost", "name": "g", "uid": "11111111-1111-1111-1111-111111111111"}

	// Created in the order of the table, the last one dangling: when it is
	// gone, a scan that saw every other one has run.
	s.must(201, "POST", widgetsPath, ownedWidget("two-owners", nil, ownedBy(owner, false), stale))
	s.must(201, "POST", widgetsPath, ownedWidget("unknown-kind", nil, unknown))
	s.must(201, "POST", "/api/v1/namespaces/other/configmaps", configMap("other-ns", ownedBy(owner, false)))
	s.must(201, "POST", widgetsPath, ownedWidget("cluster-owner", nil, ownedBy(ns, false)))
	s.must(201, "POST", namespacesPath, map[string]any{"metadata": map[string]any{"name": "cluster-dep",
		"ownerReferences": []any{ownedBy(owner, false)}}})
	s.must(201, "POST", widgetsPath, ownedWidget("dangling", nil, stale))
	s.gone(t, widgetsPath+"/dangling")

	// An owner of the same name in another namespace is not the owner.
	s.gone(t, "/api/v1/namespaces/other/configmaps/other-ns")
	eventually(t, "the absent owner's reference to be removed", func() bool {
		refs, _ := path(s.must(200, "GET", widgetsPath+"/two-owners", nil), "metadata.ownerReferences").([]any)
		return len(refs) == 1
	})
	for _, p := range []string{widgetsPath + "/unknown-kind", widgetsPath + "/cluster-owner", namespacesPath + "/cluster-dep"} {
		s.must(200, "GET", p, nil)
	}

	// A cluster-scoped owner of namespaced dependents.
	s.must(200, "DELETE", namespacesPath+"/other", nil)
	s.gone(t, namespacesPath+"/other")
	s.gone(t, widgetsPath+"/cluster-owner")
}

// Close stops the collector; closing twice is fine.
func TestGCClose(t *testing.T) {
	s := newServer(t)
	if err := s.reg.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.reg.Close(); err != nil {
		t.Fatal(err)
	}
}
