package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// Run runs the conformance suite. Each subtest calls newStore for a fresh,
// empty store that nothing else writes to (the suite checks revisions
// exactly), and subtests run in parallel, so newStore must be safe for
// concurrent use; register any cleanup with t.Cleanup.
//
// The store newStore returns must wait only briefly (about 100ms) for a
// revision newer than its current one before answering ErrTooLarge: the
// suite asks for such revisions on purpose, and the whole suite should
// take a few seconds. Its watchers' buffers must be bounded: one subtest
// never reads a watch while writing thousands of events. The Linearizable
// group records DefaultLinearizableOps operations of concurrent clients
// ($KAPI_LINEARIZABILITY_OPS overrides the count; see CheckLinearizable).
func Run(t *testing.T, newStore func(t *testing.T) storage.Interface) {
	groups := []struct {
		name  string
		tests []test
	}{
		{"Create", createTests},
		{"Get", getTests},
		{"List", listTests},
		{"Compact", compactTests},
		{"GuaranteedUpdate", updateTests},
		{"Delete", deleteTests},
		{"Watch", watchTests},
		{"Consistency", consistencyTests},
		{"Linearizable", linearizableTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, tt := range g.tests {
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					tt.fn(t, newStore(t))
				})
			}
		})
	}
}

type test struct {
	name string
	fn   func(t *testing.T, s storage.Interface)
}

// wait bounds every wait for an event or a blocked call; it only matters
// when a backend is broken, so it is generous: 400 contended updates
// through an embedded etcd under -race on a loaded 2-core machine have
// taken more than 5s.
const wait = 30 * time.Second

// obj builds an object for key with labels given as "k=v" pairs. Fields
// hold metadata.name and, for /<g>/<r>/<ns>/<name> keys, metadata.namespace.
func obj(key, value string, labels ...string) storage.Object {
	parts := strings.Split(strings.TrimPrefix(key, "/"), "/")
	f := map[string]string{"metadata.name": parts[len(parts)-1]}
	if len(parts) == 4 {
		f["metadata.namespace"] = parts[2]
	}
	var l map[string]string
	if len(labels) > 0 {
		l = map[string]string{}
		for _, kv := range labels {
			k, v, _ := strings.Cut(kv, "=")
			l[k] = v
		}
	}
	return storage.Object{Key: key, Value: []byte(value), UID: "uid-" + key, Labels: l, Fields: f}
}

func create(t *testing.T, s storage.Interface, o storage.Object) storage.Object {
	t.Helper()
	got, err := s.Create(t.Context(), o)
	if err != nil {
		t.Fatalf("Create(%s): %v", o.Key, err)
	}
	return got
}

// put replaces the value (and, when given, the labels) of key.
func put(t *testing.T, s storage.Interface, key, value string, labels ...string) storage.Object {
	t.Helper()
	got, err := s.GuaranteedUpdate(t.Context(), key, storage.UpdateOptions{}, func(cur storage.Object) (storage.Object, error) {
		n := obj(key, value, labels...)
		n.UID = cur.UID
		if len(labels) == 0 {
			n.Labels = cur.Labels
		}
		return n, nil
	})
	if err != nil {
		t.Fatalf("GuaranteedUpdate(%s): %v", key, err)
	}
	return got
}

func del(t *testing.T, s storage.Interface, key string) storage.Object {
	t.Helper()
	got, err := s.Delete(t.Context(), key, storage.DeleteOptions{})
	if err != nil {
		t.Fatalf("Delete(%s): %v", key, err)
	}
	return got
}

func revision(t *testing.T, s storage.Interface) uint64 {
	t.Helper()
	r, err := s.Revision(t.Context())
	if err != nil {
		t.Fatalf("Revision: %v", err)
	}
	return r
}

func get(t *testing.T, s storage.Interface, key string, m rv.Match, r uint64) storage.Object {
	t.Helper()
	got, err := s.Get(t.Context(), key, storage.GetOptions{Match: m, Revision: r})
	if err != nil {
		t.Fatalf("Get(%s, %v %d): %v", key, m, r, err)
	}
	return got
}

func list(t *testing.T, s storage.Interface, prefix string, o storage.ListOptions) storage.ListResult {
	t.Helper()
	got, err := s.List(t.Context(), prefix, o)
	if err != nil {
		t.Fatalf("List(%s, %+v): %v", prefix, o, err)
	}
	return got
}

// wantErr checks that err is a *storage.Error wrapping sentinel.
func wantErr(t *testing.T, what string, err, sentinel error) *storage.Error {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("%s: got error %v; want %v", what, err, sentinel)
	}
	var se *storage.Error
	if !errors.As(err, &se) {
		t.Fatalf("%s: got %T (%v); want a *storage.Error", what, err, err)
	}
	return se
}

// sameObj compares what a backend must keep of an object.
func sameObj(t *testing.T, what string, got, want storage.Object) {
	t.Helper()
	if got.Key != want.Key || !bytes.Equal(got.Value, want.Value) || got.Revision != want.Revision ||
		got.UID != want.UID || !sameMap(got.Labels, want.Labels) || !sameMap(got.Fields, want.Fields) {
		t.Fatalf("%s: got %s; want %s", what, show(got), show(want))
	}
}

func sameMap(a, b map[string]string) bool { return len(a) == len(b) && maps.Equal(a, b) }

func show(o storage.Object) string {
	return fmt.Sprintf("{%s %q rev=%d uid=%s labels=%v fields=%v}", o.Key, o.Value, o.Revision, o.UID, o.Labels, o.Fields)
}

// keys lists the keys and values of a page as "key=value" strings.
func keys(items []storage.Object) []string {
	out := make([]string, len(items))
	for i, o := range items {
		out[i] = o.Key + "=" + string(o.Value)
	}
	return out
}

func eqStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// watcher reads one watch with a deadline on every event. A goroutine
// moves events from the watch into an unbounded queue as soon as they
// come, so a test that checks events only after its writes never looks
// like a slow watcher to the store.
type watcher struct {
	t    *testing.T
	w    watch.Interface
	out  <-chan watch.Event
	last uint64 // revision of the last live event
}

func startWatch(t *testing.T, s storage.Interface, key string, o storage.WatchOptions) *watcher {
	t.Helper()
	w, err := s.Watch(t.Context(), key, o)
	if err != nil {
		t.Fatalf("Watch(%s, %+v): %v", key, o, err)
	}
	return newWatcher(t, w)
}

func newWatcher(t *testing.T, w watch.Interface) *watcher {
	done := make(chan struct{})
	t.Cleanup(func() {
		w.Stop()
		close(done)
	})
	return &watcher{t: t, w: w, out: pump(w.ResultChan(), done)}
}

// pump forwards in to the returned channel through an unbounded queue,
// and closes it after in is closed and the queue drained, or on done.
func pump(in <-chan watch.Event, done <-chan struct{}) <-chan watch.Event {
	out := make(chan watch.Event)
	go func() {
		defer close(out)
		var q []watch.Event
		for in != nil || len(q) > 0 {
			var send chan watch.Event
			var first watch.Event
			if len(q) > 0 {
				send, first = out, q[0]
			}
			select {
			case ev, ok := <-in:
				if !ok {
					in = nil
					continue
				}
				q = append(q, ev)
			case send <- first:
				q = q[1:]
			case <-done:
				return
			}
		}
	}()
	return out
}

// next returns the next event, skipping periodic bookmarks (which may come
// at any time), and fails the test if none comes in time or the channel is
// closed.
func (w *watcher) next(want string) watch.Event {
	w.t.Helper()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-w.out:
			if !ok {
				w.t.Fatalf("watch closed; want %s", want)
			}
			if ev.Type == watch.Bookmark && !ev.InitialEventsEnd {
				if ev.Revision < w.last {
					w.t.Fatalf("bookmark at revision %d after an event at %d", ev.Revision, w.last)
				}
				continue
			}
			return ev
		case <-timer.C:
			w.t.Fatalf("no watch event within %v; want %s", wait, want)
		}
	}
}

// expect reads the next event and checks its type, key, value and
// revision: for ADDED and MODIFIED the object's own revision equals the
// event's; for DELETED the object is an older state.
func (w *watcher) expect(typ watch.EventType, key, value string, rev uint64) storage.Object {
	w.t.Helper()
	want := fmt.Sprintf("%s %s=%q at %d", typ, key, value, rev)
	ev := w.next(want)
	o, ok := ev.Object.(storage.Object)
	if !ok {
		w.t.Fatalf("got event %s with a %T object; want %s carrying a storage.Object", ev.Type, ev.Object, want)
	}
	if ev.Type != typ || o.Key != key || string(o.Value) != value || ev.Revision != rev {
		w.t.Fatalf("got event %s %s=%q at %d; want %s", ev.Type, o.Key, o.Value, ev.Revision, want)
	}
	switch {
	case typ == watch.Deleted && o.Revision >= ev.Revision:
		w.t.Fatalf("DELETED %s: object revision %d; want the older last state, before %d", key, o.Revision, ev.Revision)
	case typ != watch.Deleted && o.Revision != ev.Revision:
		w.t.Fatalf("%s %s: object revision %d; want the event's %d", typ, key, o.Revision, ev.Revision)
	}
	if ev.Revision <= w.last {
		w.t.Fatalf("%s %s at revision %d after an event at %d; want increasing revisions", typ, key, ev.Revision, w.last)
	}
	w.last = ev.Revision
	return o
}

// closed waits for the result channel to close, draining events.
func (w *watcher) closed(why string) {
	w.t.Helper()
	drained(w.t, w.out, why)
}

func drained(t *testing.T, ch <-chan watch.Event, why string) {
	t.Helper()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-timer.C:
			t.Fatalf("watch still open %v after %s; want ResultChan closed", wait, why)
		}
	}
}

// within runs f and fails if it does not return in time (a blocked write).
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatalf("%s did not return within %v", what, wait)
	}
}

// ctxTimeout returns a context for calls that may wait.
func ctxTimeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	t.Cleanup(cancel)
	return ctx
}
