package storage_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/internal/jsonval"
	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/watch"
)

func same(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func TestMapForm(t *testing.T) {
	o := storage.Object{Key: "/k", Revision: 7, Value: []byte(
		`{"metadata":{"name":"a"},"spec":{"n":3,"big":9007199254740993,"f":1.5,"l":[1,{"x":-2}],"s":"x","b":true,"z":null}}`)}
	m, err := o.Map()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"metadata": map[string]any{"name": "a", "resourceVersion": "7"},
		"spec": map[string]any{"n": int64(3), "big": int64(9007199254740993), "f": 1.5,
			"l": []any{int64(1), map[string]any{"x": int64(-2)}}, "s": "x", "b": true, "z": nil},
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("Map() = %#v; want %#v", m, want)
	}
	for _, bad := range []string{`null`, `[1]`, `{"a":`, `"s"`, `{} {}`, `{}x`} {
		if _, err := (storage.Object{Key: "/bad", Value: []byte(bad)}).Map(); err == nil {
			t.Errorf("Map() of %s: no error; want one", bad)
		}
	}
	if m, err := (storage.Object{Key: "/k", Revision: 1, Value: []byte(`{}`)}).Map(); err != nil || m["metadata"].(map[string]any)["resourceVersion"] != "1" {
		t.Errorf("Map() of {} = %v, %v; want metadata with resourceVersion 1", m, err)
	}
}

// TestMapDecodesOncePerState checks the decode-once rule: a Get, the items
// of a List and the events of every watcher of one state share one map.
func TestMapDecodesOncePerState(t *testing.T) {
	ctx := context.Background()
	s := memory.New(memory.Options{})
	defer s.Close()
	var ws []watch.Interface
	for range 3 {
		w, err := s.Watch(ctx, "/w/", storage.WatchOptions{Recursive: true})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		ws = append(ws, w)
	}
	created, err := s.Create(ctx, storage.Object{Key: "/w/a", Value: []byte(`{"metadata":{"name":"a"},"n":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	first, err := created.Map()
	if err != nil {
		t.Fatal(err)
	}
	got, _ := s.Get(ctx, "/w/a", storage.GetOptions{Match: rv.MostRecent})
	if m, _ := got.Map(); !same(m, first) {
		t.Error("Get's Map() is a new decode; want the created state's map")
	}
	l, _ := s.List(ctx, "/w/", storage.ListOptions{Match: rv.MostRecent})
	if m, _ := l.Items[0].Map(); !same(m, first) {
		t.Error("List item's Map() is a new decode; want the shared map")
	}
	for i, w := range ws {
		ev := <-w.ResultChan()
		o := ev.Object.(storage.Object)
		if m, _ := o.Map(); !same(m, first) {
			t.Errorf("watcher %d: event's Map() is a new decode; want the shared map", i)
		}
	}
	if _, err := s.Delete(ctx, "/w/a", storage.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var prev map[string]any
	for i, w := range ws {
		ev := <-w.ResultChan()
		o := ev.Object.(storage.Object)
		o.Revision = ev.Revision // a DELETED event shows the last state at the delete's revision
		m, _ := o.Map()
		if same(m, first) {
			t.Fatalf("watcher %d: DELETED event shares the ADDED map; want its own resourceVersion", i)
		}
		if got, want := m["metadata"].(map[string]any)["resourceVersion"], fmt.Sprint(ev.Revision); got != want {
			t.Errorf("DELETED resourceVersion = %v; want %v", got, want)
		}
		if prev != nil && !same(m, prev) {
			t.Errorf("watcher %d: DELETED event decoded again; want one map for every watcher", i)
		}
		prev = m
	}
}

func TestShareMap(t *testing.T) {
	ctx := context.Background()
	s := memory.New(memory.Options{})
	defer s.Close()
	out, err := s.Create(ctx, storage.Object{Key: "/w/a", Value: []byte(`{"metadata":{"name":"a"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	given := map[string]any{"metadata": map[string]any{"name": "a", "resourceVersion": fmt.Sprint(out.Revision)}}
	out.ShareMap(given)
	got, _ := s.Get(ctx, "/w/a", storage.GetOptions{Match: rv.MostRecent})
	if m, _ := got.Map(); !same(m, given) {
		t.Errorf("Map() after ShareMap = %v; want the shared map", m)
	}
	out.ShareMap(map[string]any{"other": true}) // too late: readers have one
	if m, _ := got.Map(); !same(m, given) {
		t.Errorf("a second ShareMap replaced the form readers share: %v", m)
	}
	(storage.Object{Value: []byte(`{}`)}).ShareMap(given) // no Memo: nothing to do, no panic
}

// leaked reports whether the shared form of o differs from a fresh
// decode of its stored bytes: a reader's change leaked into the map every
// other reader sees.
func leaked(t *testing.T, o storage.Object) bool {
	t.Helper()
	shared, err := o.Map()
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := storage.Object{Key: o.Key, Value: o.Value, Revision: o.Revision}.Map() // no Memo: decodes afresh
	if err != nil {
		t.Fatal(err)
	}
	return !reflect.DeepEqual(shared, fresh)
}

// TestMapMutationDoesNotLeak is the decode-once rule's enforcement: many
// readers share one map concurrently (under -race any write to it races
// with the others' reads), each copies before changing anything, and
// afterwards the shared map still equals the stored bytes. The control
// shows the check fails when a reader breaks the rule.
func TestMapMutationDoesNotLeak(t *testing.T) {
	ctx := context.Background()
	s := memory.New(memory.Options{})
	defer s.Close()
	o, err := s.Create(ctx, storage.Object{Key: "/w/a", Value: []byte(`{"metadata":{"name":"a","labels":{"app":"x"}},"spec":{"replicas":1,"ports":[{"port":80}]}}`)})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				cur, err := s.Get(ctx, "/w/a", storage.GetOptions{Match: rv.MostRecent})
				if err != nil {
					t.Error(err)
					return
				}
				m, err := cur.Map()
				if err != nil {
					t.Error(err)
					return
				}
				_ = fmt.Sprint(m)                             // read every field
				mine := jsonval.Copy(m, nil).(map[string]any) // what runtime.DeepCopyJSON does for client-go users
				mine["spec"].(map[string]any)["replicas"] = int64(i)
				mine["metadata"].(map[string]any)["labels"].(map[string]any)["reader"] = fmt.Sprint(i)
				mine["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)["port"] = int64(i)
			}
		}()
	}
	wg.Wait()
	if leaked(t, o) {
		t.Fatal("a reader's change leaked into the shared map")
	}

	// Control: a reader that changes the shared map in place.
	m, _ := o.Map()
	m["spec"].(map[string]any)["replicas"] = int64(99)
	if !leaked(t, o) {
		t.Fatal("the leak check missed a change made to the shared map")
	}
}

// BenchmarkMap compares a shared read of a ~2 KiB object's decoded form
// (many goroutines, one Memo) with decoding it on every read.
func BenchmarkMap(b *testing.B) {
	value := []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default","labels":{"app":"x","shard":"s01"}},"spec":{"replicas":3,"ports":[{"port":80,"protocol":"TCP"},{"port":443,"protocol":"TCP"}],"note":"` +
		string(bytes.Repeat([]byte("x"), 1500)) + `"}}`)
	b.Run("shared", func(b *testing.B) {
		o := storage.Object{Key: "/w", Value: value, Revision: 9, Memo: new(storage.Memo)}
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := o.Map(); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("decode-each", func(b *testing.B) {
		o := storage.Object{Key: "/w", Value: value, Revision: 9}
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := o.Map(); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// FuzzMap: any stored bytes decode to an object carrying the revision,
// or to an error; never a panic.
func FuzzMap(f *testing.F) {
	for _, s := range []string{`{}`, `{"metadata":{"name":"a"},"n":1.5e3}`, `{"metadata":7}`, `[]`, `{"a":1}{}`, `{"a":[1,{"b":-0}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := storage.Object{Key: "/k", Value: b, Revision: 5, Memo: new(storage.Memo)}.Map()
		if err != nil {
			return
		}
		md, ok := m["metadata"].(map[string]any)
		if !ok || md["resourceVersion"] != "5" {
			t.Fatalf("Map(%q) = %v; want metadata.resourceVersion 5", b, m)
		}
	})
}

// TestMapFirstReadersShareOneDecode: readers racing to decode a state
// nobody shared a map for all get the same map; a bad value's error is
// returned to every reader.
func TestMapFirstReadersShareOneDecode(t *testing.T) {
	o := storage.Object{Key: "/w/a", Revision: 3, Memo: new(storage.Memo), Value: []byte(`{"metadata":{"name":"a"}}`)}
	maps := make([]map[string]any, 16)
	var wg sync.WaitGroup
	for i := range maps {
		wg.Go(func() {
			m, err := o.Map()
			if err != nil {
				t.Error(err)
			}
			maps[i] = m
		})
	}
	wg.Wait()
	for i, m := range maps {
		if !same(m, maps[0]) {
			t.Fatalf("reader %d got its own decode; want one map for all", i)
		}
	}
	at5 := o
	at5.Revision = 5
	m5, err := at5.Map()
	if err != nil || same(m5, maps[0]) || m5["metadata"].(map[string]any)["resourceVersion"] != "5" {
		t.Fatalf("Map() at another revision = %v, %v; want its own map with resourceVersion 5", m5, err)
	}
	if again, _ := at5.Map(); !same(again, m5) {
		t.Error("Map() at the other revision decoded again; want it remembered")
	}
	bad := storage.Object{Key: "/w/b", Revision: 3, Memo: new(storage.Memo), Value: []byte(`[]`)}
	for range 2 {
		if _, err := bad.Map(); err == nil {
			t.Error("Map() of a non-object: no error; want one")
		}
	}
}

// TestMarshalMap: MarshalMap gives encoding/json's bytes (internal/jsonval
// has the fuzz test).
func TestMarshalMap(t *testing.T) {
	m := map[string]any{"kind": "Widget", "metadata": map[string]any{"name": "a<b>", "labels": map[string]any{"z": "1", "a": "2"}},
		"spec": map[string]any{"n": int64(1) << 60, "f": 0.5, "l": []any{true, nil, "é\u2028"}}}
	got, err := storage.MarshalMap(m)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(m)
	if string(got) != string(want) {
		t.Fatalf("MarshalMap: got %s; want encoding/json's %s", got, want)
	}
}
