package gc

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
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

func TestRelevant(t *testing.T) {
	tests := []struct {
		typ   watch.EventType
		value string
		want  bool
	}{
		{watch.Deleted, `{}`, true},
		{watch.Added, `{"metadata":{"name":"a"}}`, false},
		{watch.Modified, `{"metadata":{"ownerReferences":[]}}`, true},
		{watch.Modified, `{"metadata":{"deletionTimestamp":"x"}}`, true},
	}
	for _, tt := range tests {
		ev := watch.Event{Type: tt.typ, Object: storage.Object{Value: []byte(tt.value)}}
		if got := relevant(ev); got != tt.want {
			t.Errorf("%s %s: got %v; want %v", tt.typ, tt.value, got, tt.want)
		}
	}
}
