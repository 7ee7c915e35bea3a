package gc

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/watch"
)

// fakeRegistry serves one cluster-scoped kind, "v1 Thing", straight from
// the store: no admission, no finalizers of its own.
type fakeRegistry struct{ store storage.Interface }

type thing struct{}

func (thing) Prefix() string                 { return "/things/" }
func (thing) Key(_, name string) string      { return "/things/" + name }
func (thing) Namespaced() bool               { return false }
func (f fakeRegistry) Resources() []Resource { return []Resource{thing{}} }

func (f fakeRegistry) Resource(apiVersion, kind string) Resource {
	if apiVersion == "v1" && kind == "Thing" {
		return thing{}
	}
	return nil
}

func (f fakeRegistry) Decode(o storage.Object) (map[string]any, error) {
	var m map[string]any
	return m, json.Unmarshal(o.Value, &m)
}

func (f fakeRegistry) Delete(ctx context.Context, res Resource, _, name string, o DeleteOptions) error {
	_, err := f.store.Delete(ctx, res.Key("", name), storage.DeleteOptions{Preconditions: o.Preconditions})
	if storage.IsNotFound(err) || storage.IsConflict(err) {
		return nil
	}
	return err
}

func (f fakeRegistry) Update(ctx context.Context, res Resource, _, name string, edit func(map[string]any) bool) error {
	_, err := f.store.GuaranteedUpdate(ctx, res.Key("", name), storage.UpdateOptions{}, func(cur storage.Object) (storage.Object, error) {
		m, err := f.Decode(cur)
		if err != nil {
			return storage.Object{}, err
		}
		if !edit(m) {
			return storage.Object{}, errUnchanged
		}
		cur.Value, _ = json.Marshal(m)
		return cur, nil
	})
	if errors.Is(err, errUnchanged) || storage.IsNotFound(err) {
		return nil
	}
	return err
}

var errUnchanged = errors.New("unchanged")

func put(t *testing.T, s storage.Interface, name, uid string, meta map[string]any) {
	t.Helper()
	meta["name"], meta["uid"] = name, uid
	b, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Thing", "metadata": meta})
	if _, err := s.Create(context.Background(), storage.Object{Key: "/things/" + name, Value: b, UID: uid}); err != nil {
		t.Fatal(err)
	}
}

func ref(name, uid string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Thing", "name": name, "uid": uid}
}

// eventually waits for cond, polling the store.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not after 10s", what)
}

func TestCollector(t *testing.T) {
	ctx := context.Background()
	store := memory.New(memory.Options{})
	put(t, store, "owner", "u1", map[string]any{})
	put(t, store, "kept", "u2", map[string]any{"ownerReferences": []any{ref("owner", "u1")}})
	put(t, store, "dangling", "u3", map[string]any{"ownerReferences": []any{ref("gone", "u0")}})
	put(t, store, "mixed", "u4", map[string]any{"ownerReferences": []any{ref("owner", "u1"), ref("gone", "u0")}})
	put(t, store, "unknown kind", "u5", map[string]any{"ownerReferences": []any{
		map[string]any{"apiVersion": "v9", "kind": "Other", "name": "x", "uid": "u0"}}})
	put(t, store, "orphaner", "u6", map[string]any{"deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": []any{"orphan"}})
	put(t, store, "orphan", "u7", map[string]any{"ownerReferences": []any{ref("orphaner", "u6")}})

	c := Start(fakeRegistry{store}, store, slog.New(slog.DiscardHandler))
	defer c.Close()
	refsOf := func(name string) any {
		o, err := store.Get(ctx, "/things/"+name, storage.GetOptions{})
		if err != nil {
			return err
		}
		var m map[string]any
		json.Unmarshal(o.Value, &m)
		return m["metadata"].(map[string]any)["ownerReferences"]
	}
	eventually(t, "dangling deleted", func() bool {
		return storage.IsNotFound(errOf(store.Get(ctx, "/things/dangling", storage.GetOptions{})))
	})
	eventually(t, "mixed keeps its live owner only", func() bool {
		return reflect.DeepEqual(refsOf("mixed"), []any{ref("owner", "u1")})
	})
	eventually(t, "orphan loses its reference", func() bool { return refsOf("orphan") == nil })
	eventually(t, "orphaner loses its finalizer", func() bool {
		o, err := store.Get(ctx, "/things/orphaner", storage.GetOptions{})
		if err != nil {
			return false
		}
		var m map[string]any
		json.Unmarshal(o.Value, &m)
		return len(object(m).meta()["finalizers"].([]any)) == 0
	})
	for _, name := range []string{"owner", "kept", "unknown kind", "orphan"} {
		if _, err := store.Get(ctx, "/things/"+name, storage.GetOptions{}); err != nil {
			t.Errorf("%s: got %v; want kept", name, err)
		}
	}
}

func errOf(_ storage.Object, err error) error { return err }

// The graph: each event records the edges and makes due exactly the
// keys the package comment's worked example names.
func TestGraphApply(t *testing.T) {
	store := memory.New(memory.Options{})
	defer store.Close()
	thingObj := func(name, uid string, meta map[string]any) storage.Object {
		meta["name"], meta["uid"] = name, uid
		b, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Thing", "metadata": meta})
		return storage.Object{Key: "/things/" + name, Value: b, UID: uid}
	}
	type step struct {
		typ watch.EventType
		obj storage.Object
		// What the step makes due, and the dependents of uid "a" after it.
		wantDirty []string
		wantDeps  []string
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{{
		name: "an object with neither owners nor a deletion is skipped",
		steps: []step{
			{typ: watch.Added, obj: thingObj("a", "a", map[string]any{})},
			{typ: watch.Modified, obj: thingObj("a", "a", map[string]any{"labels": map[string]any{"x": "y"}})},
		},
	}, {
		name: "an owner's delete makes its dependents due",
		steps: []step{
			{typ: watch.Added, obj: thingObj("b", "b", map[string]any{"ownerReferences": []any{ref("a", "a")}}), wantDirty: []string{"/things/b"}, wantDeps: []string{"/things/b"}},
			{typ: watch.Added, obj: thingObj("c", "c", map[string]any{"ownerReferences": []any{ref("a", "a")}}), wantDirty: []string{"/things/c"}, wantDeps: []string{"/things/b", "/things/c"}},
			{typ: watch.Deleted, obj: thingObj("a", "a", map[string]any{}), wantDirty: []string{"/things/b", "/things/c"}, wantDeps: []string{"/things/b", "/things/c"}},
			{typ: watch.Deleted, obj: thingObj("b", "b", map[string]any{}), wantDeps: []string{"/things/c"}},
		},
	}, {
		name: "a reference dropped leaves the index",
		steps: []step{
			{typ: watch.Added, obj: thingObj("b", "b", map[string]any{"ownerReferences": []any{ref("a", "a")}}), wantDirty: []string{"/things/b"}, wantDeps: []string{"/things/b"}},
			{typ: watch.Modified, obj: thingObj("b", "b", map[string]any{})},
		},
	}, {
		name: "foreground deletion: the owner is due when a dependent goes",
		steps: []step{
			{typ: watch.Added, obj: thingObj("b", "b", map[string]any{"ownerReferences": []any{ref("a", "a")}}), wantDirty: []string{"/things/b"}, wantDeps: []string{"/things/b"}},
			{typ: watch.Modified, obj: thingObj("a", "a", map[string]any{"deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": []any{"foregroundDeletion"}}), wantDirty: []string{"/things/a", "/things/b"}, wantDeps: []string{"/things/b"}},
			{typ: watch.Deleted, obj: thingObj("b", "b", map[string]any{}), wantDirty: []string{"/things/a"}},
		},
	}, {
		name: "a replaced object (new uid) is its old self's delete",
		steps: []step{
			{typ: watch.Added, obj: thingObj("b", "b", map[string]any{"ownerReferences": []any{ref("a", "a")}}), wantDirty: []string{"/things/b"}, wantDeps: []string{"/things/b"}},
			{typ: watch.Added, obj: thingObj("x", "x", map[string]any{"ownerReferences": []any{ref("b", "b")}}), wantDirty: []string{"/things/x"}, wantDeps: []string{"/things/b"}},
			{typ: watch.Modified, obj: thingObj("b", "b2", map[string]any{"ownerReferences": []any{ref("a", "a")}}), wantDirty: []string{"/things/b", "/things/x"}, wantDeps: []string{"/things/b"}},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Collector{reg: fakeRegistry{store}, graph: newGraph()}
			for i, st := range tc.steps {
				c.apply(watch.Event{Type: st.typ, Object: st.obj})
				var dirty, deps []string
				for k := range c.graph.takeDirty() {
					dirty = append(dirty, k)
				}
				for k := range c.graph.dependentsOf("a") {
					deps = append(deps, k)
				}
				slices.Sort(dirty)
				slices.Sort(deps)
				if !slices.Equal(dirty, st.wantDirty) || !slices.Equal(deps, st.wantDeps) {
					t.Errorf("step %d (%s %s): due %v, dependents of a %v; want %v, %v", i, st.typ, st.obj.Key, dirty, deps, st.wantDirty, st.wantDeps)
				}
			}
		})
	}
}
