package cache_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/cache"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/storage/storagetest"
	"github.com/kapi-dev/kapi/watch"
)

// newCache returns a cache over a fresh memory store, both waiting
// briefly for future revisions, as the suite asks.
func newCache(t *testing.T, readYourWrites bool) (*cache.Cache, *memory.Store) {
	t.Helper()
	tokens := rv.NewTokens()
	m := memory.New(memory.Options{Wait: 100 * time.Millisecond, Tokens: tokens})
	t.Cleanup(m.Close)
	c, err := cache.New(m, cache.Options{Wait: 100 * time.Millisecond, ReadYourWrites: readYourWrites, Tokens: tokens})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(c.Close)
	return c, m
}

// TestConformance runs the shared storage suite against a cache over
// the memory store, in both write modes.
func TestConformance(t *testing.T) {
	for _, ryw := range []bool{false, true} {
		t.Run(fmt.Sprint("ReadYourWrites=", ryw), func(t *testing.T) {
			storagetest.Run(t, func(t *testing.T) storage.Interface {
				c, _ := newCache(t, ryw)
				return c
			})
		})
	}
}

// TestLinearizable100k checks a history of 100k operations (10k in
// -short mode; $KAPI_LINEARIZABILITY_OPS overrides both).
func TestLinearizable100k(t *testing.T) {
	opts := storagetest.LinearizableOptions{Ops: 100000}
	if testing.Short() {
		opts.Ops = 10000
	}
	if os.Getenv(storagetest.OpsEnv) != "" {
		opts.Ops = 0
	}
	storagetest.RunLinearizable(t, func(t *testing.T) storage.Interface {
		c, _ := newCache(t, false)
		return c
	}, opts)
}

// fixture is a cache over a memory store behind a test backend. Its
// writes wait for the cache (ReadYourWrites), so that a test knows what
// the cache holds.
type fixture struct {
	c *cache.Cache
	m *memory.Store
	b *backend
}

func newFixture(t *testing.T, opts cache.Options) fixture {
	t.Helper()
	tokens := rv.NewTokens()
	m := memory.New(memory.Options{Wait: 100 * time.Millisecond, Tokens: tokens})
	t.Cleanup(m.Close)
	b := &backend{Interface: m}
	opts.Tokens = tokens
	opts.ReadYourWrites = true
	c, err := cache.New(b, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(c.Close)
	t.Cleanup(b.release)
	return fixture{c: c, m: m, b: b}
}

func obj(key, value string) storage.Object {
	return storage.Object{Key: key, Value: []byte(value), UID: "uid-" + key}
}

func set(value string) storage.UpdateFunc {
	return func(cur storage.Object) (storage.Object, error) {
		cur.Value = []byte(value)
		return cur, nil
	}
}

func mustCreate(t *testing.T, s storage.Interface, key, value string) storage.Object {
	t.Helper()
	o, err := s.Create(t.Context(), obj(key, value))
	if err != nil {
		t.Fatalf("Create(%s): %v", key, err)
	}
	return o
}

func mustSet(t *testing.T, s storage.Interface, key, value string) storage.Object {
	t.Helper()
	o, err := s.GuaranteedUpdate(t.Context(), key, storage.UpdateOptions{}, set(value))
	if err != nil {
		t.Fatalf("GuaranteedUpdate(%s): %v", key, err)
	}
	return o
}

// next reads one event, skipping bookmarks; ok is false once the watch
// has ended. A broken cache fails the test after 10s instead of hanging.
func next(t *testing.T, w watch.Interface) (watch.Event, bool) {
	t.Helper()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if ok && ev.Type == watch.Bookmark {
				continue
			}
			return ev, ok
		case <-timer.C:
			t.Fatal("no watch event within 10s")
			return watch.Event{}, false
		}
	}
}

func expect(t *testing.T, w watch.Interface, typ watch.EventType, key, value string) {
	t.Helper()
	ev, ok := next(t, w)
	if !ok {
		t.Fatalf("watch ended; want %s %s=%s", typ, key, value)
	}
	o := ev.Object.(storage.Object)
	if ev.Type != typ || o.Key != key || string(o.Value) != value {
		t.Fatalf("got %s %s=%s; want %s %s=%s", ev.Type, o.Key, o.Value, typ, key, value)
	}
}

// ended drains w until it closes and returns why it ended.
func ended(t *testing.T, w watch.Interface) error {
	t.Helper()
	for {
		if _, ok := next(t, w); !ok {
			return w.(*watch.Watcher).Err()
		}
	}
}

// TestConsistentRead holds the backend's watch back after a write made
// directly to the backend, so the cache is one write behind, and reads
// through the cache. served says who must answer.
func TestConsistentRead(t *testing.T) {
	const key = "/g/r/ns/a"
	type read func(ctx context.Context, c *cache.Cache, rev uint64) (string, error)
	get := func(m rv.Match) read {
		return func(ctx context.Context, c *cache.Cache, rev uint64) (string, error) {
			o, err := c.Get(ctx, key, storage.GetOptions{Match: m, Revision: rev})
			return string(o.Value), err
		}
	}
	list := func(m rv.Match) read {
		return func(ctx context.Context, c *cache.Cache, rev uint64) (string, error) {
			r, err := c.List(ctx, "/g/r/", storage.ListOptions{Match: m, Revision: rev})
			if err != nil {
				return "", err
			}
			if len(r.Items) != 1 {
				return fmt.Sprint(len(r.Items), " items"), nil
			}
			return string(r.Items[0].Value), nil
		}
	}
	tests := []struct {
		name    string
		wait    time.Duration // Options.Wait
		release bool          // let the held event through while the read waits
		read    read
		ahead   uint64 // read at the backend's revision plus this (NotOlderThan, Exact)
		want    string
		wantErr error
		backend bool // served by the backend
	}{
		{"Get Any is the cache's state", time.Minute, false, get(rv.Any), 0, "v1", nil, false},
		{"List Any is the cache's state", time.Minute, false, list(rv.Any), 0, "v1", nil, false},
		{"Get MostRecent waits for the cache", time.Minute, true, get(rv.MostRecent), 0, "v2", nil, false},
		{"List MostRecent waits for the cache", time.Minute, true, list(rv.MostRecent), 0, "v2", nil, false},
		{"Get NotOlderThan waits for the cache", time.Minute, true, get(rv.NotOlderThan), 0, "v2", nil, false},
		{"List Exact waits for the cache", time.Minute, true, list(rv.Exact), 0, "v2", nil, false},
		{"Get MostRecent falls back after Wait", 50 * time.Millisecond, false, get(rv.MostRecent), 0, "v2", nil, true},
		{"List MostRecent falls back after Wait", 50 * time.Millisecond, false, list(rv.MostRecent), 0, "v2", nil, true},
		{"Get NotOlderThan falls back after Wait", 50 * time.Millisecond, false, get(rv.NotOlderThan), 0, "v2", nil, true},
		{"Get NotOlderThan a future revision", 50 * time.Millisecond, true, get(rv.NotOlderThan), 1, "", storage.ErrTooLarge, false},
		{"List Exact a future revision", 50 * time.Millisecond, true, list(rv.Exact), 1, "", storage.ErrTooLarge, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, cache.Options{Wait: tt.wait})
			mustCreate(t, f.c, key, "v1")
			f.b.hold()
			v2 := mustSet(t, f.m, key, "v2") // straight to the backend
			reads := f.b.gets.Load() + f.b.lists.Load()
			if tt.release {
				go func() {
					time.Sleep(10 * time.Millisecond) // most likely while the read waits; either way the answer is the same
					f.b.release()
				}()
			}
			got, err := tt.read(t.Context(), f.c, v2.Revision+tt.ahead)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("got %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
			if n := f.b.gets.Load() + f.b.lists.Load() - reads; (n > 0) != tt.backend {
				t.Fatalf("%d reads reached the backend; want the backend to serve: %v", n, tt.backend)
			}
		})
	}
}

// TestProgress writes outside the cache's prefix, which moves the
// backend's revision without an event for the cache: a consistent read
// must still be served by the cache, which learns the revision from a
// progress bookmark it asks the backend's watch for.
func TestProgress(t *testing.T) {
	f := newFixture(t, cache.Options{Prefix: "/g/r/", Wait: time.Minute})
	mustCreate(t, f.c, "/g/r/ns/a", "v1")
	mustCreate(t, f.m, "/g/other/ns/x", "elsewhere")
	o, err := f.c.Get(t.Context(), "/g/r/ns/a", storage.GetOptions{})
	if err != nil || string(o.Value) != "v1" {
		t.Fatalf("Get: %q, %v; want v1", o.Value, err)
	}
	if n := f.b.gets.Load(); n != 0 {
		t.Fatalf("%d Gets reached the backend; want the cache to serve", n)
	}
	// Keys outside the prefix are the backend's.
	if o, err := f.c.Get(t.Context(), "/g/other/ns/x", storage.GetOptions{}); err != nil || string(o.Value) != "elsewhere" || f.b.gets.Load() != 1 {
		t.Fatalf("Get outside the prefix: %q, %v, %d backend Gets; want elsewhere from the backend", o.Value, err, f.b.gets.Load())
	}
}

// TestSlowWatcher: a watcher that never reads blocks neither the writes
// nor a watcher that reads, and ends with ErrTooSlow once the history it
// has still to read is dropped.
func TestSlowWatcher(t *testing.T) {
	const n = 3000
	f := newFixture(t, cache.Options{MaxEvents: 300})
	slow, err := f.c.Watch(t.Context(), "/g/r/", storage.WatchOptions{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Stop()
	fast, err := f.c.Watch(t.Context(), "/g/r/", storage.WatchOptions{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Stop()
	for i := range n {
		key := fmt.Sprintf("/g/r/ns/o%04d", i)
		mustCreate(t, f.c, key, "v")
		expect(t, fast, watch.Added, key, "v") // the reader keeps up
	}
	got := 0
	for {
		ev, ok := next(t, slow)
		if !ok {
			break
		}
		if o := ev.Object.(storage.Object); o.Key != fmt.Sprintf("/g/r/ns/o%04d", got) {
			t.Fatalf("slow watcher event %d: %s; want an unbroken prefix of the writes", got, o.Key)
		}
		got++
	}
	if err := slow.(*watch.Watcher).Err(); !errors.Is(err, watch.ErrTooSlow) || got >= n {
		t.Fatalf("slow watcher ended with %v after %d of %d events; want ErrTooSlow before the end", err, got, n)
	}
}

// TestHistory: the cache's history is shorter than the backend's here.
// Watches older than it fail with ErrExpired, as kube's watch cache
// answers; Exact reads older than it are the backend's.
func TestHistory(t *testing.T) {
	f := newFixture(t, cache.Options{MaxEvents: 300})
	first := mustCreate(t, f.c, "/g/r/ns/a", "v0")
	var mid storage.Object
	for i := 1; i <= 1000; i++ {
		o := mustSet(t, f.c, "/g/r/ns/a", fmt.Sprint("v", i))
		if i == 900 {
			mid = o
		}
	}
	tests := []struct {
		name    string
		do      func(ctx context.Context) (string, error)
		want    string
		wantErr error
		backend bool
	}{
		{"Watch before the history", func(ctx context.Context) (string, error) {
			_, err := f.c.Watch(ctx, "/g/r/", storage.WatchOptions{Recursive: true, Revision: first.Revision})
			return "", err
		}, "", storage.ErrExpired, false},
		{"Watch within the history", func(ctx context.Context) (string, error) {
			w, err := f.c.Watch(ctx, "/g/r/", storage.WatchOptions{Recursive: true, Revision: mid.Revision})
			if err != nil {
				return "", err
			}
			defer w.Stop()
			ev, _ := next(t, w)
			return string(ev.Object.(storage.Object).Value), nil
		}, "v901", nil, false},
		{"Get Exact before the history", func(ctx context.Context) (string, error) {
			o, err := f.c.Get(ctx, "/g/r/ns/a", storage.GetOptions{Match: rv.Exact, Revision: first.Revision})
			return string(o.Value), err
		}, "v0", nil, true},
		{"Get Exact within the history", func(ctx context.Context) (string, error) {
			o, err := f.c.Get(ctx, "/g/r/ns/a", storage.GetOptions{Match: rv.Exact, Revision: mid.Revision})
			return string(o.Value), err
		}, "v900", nil, false},
		{"List Exact before the history", func(ctx context.Context) (string, error) {
			r, err := f.c.List(ctx, "/g/r/", storage.ListOptions{Match: rv.Exact, Revision: first.Revision})
			if err != nil {
				return "", err
			}
			return string(r.Items[0].Value), nil
		}, "v0", nil, true},
		{"List Exact within the history", func(ctx context.Context) (string, error) {
			r, err := f.c.List(ctx, "/g/r/", storage.ListOptions{Match: rv.Exact, Revision: mid.Revision})
			if err != nil {
				return "", err
			}
			return string(r.Items[0].Value), nil
		}, "v900", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reads := f.b.gets.Load() + f.b.lists.Load()
			got, err := tt.do(t.Context())
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("got %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
			if n := f.b.gets.Load() + f.b.lists.Load() - reads; (n > 0) != tt.backend {
				t.Fatalf("%d reads reached the backend; want the backend to serve: %v", n, tt.backend)
			}
		})
	}
}

// TestRecovery breaks the backend's watch. If the backend still has the
// cache's revision, the cache resumes and its watchers see nothing; if
// it was compacted meanwhile, the cache re-lists and its watchers end,
// and a re-watch from their last revision is ErrExpired.
func TestRecovery(t *testing.T) {
	for _, compacted := range []bool{false, true} {
		t.Run(fmt.Sprint("compacted=", compacted), func(t *testing.T) {
			f := newFixture(t, cache.Options{Wait: time.Minute})
			a1 := mustCreate(t, f.c, "/g/r/ns/a", "v1")
			w, err := f.c.Watch(t.Context(), "/g/r/", storage.WatchOptions{Recursive: true, Revision: a1.Revision})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			if compacted {
				f.b.setRefuse(errors.New("test: unavailable"))
			}
			f.b.breakWatches(errConnection)
			mustSet(t, f.m, "/g/r/ns/a", "v2") // straight to the backend, while the cache is cut off
			b3 := mustCreate(t, f.m, "/g/r/ns/b", "v3")
			if compacted {
				if err := f.m.Compact(t.Context(), b3.Revision); err != nil {
					t.Fatal(err)
				}
				f.b.setRefuse(nil)
			}
			r, err := f.c.List(t.Context(), "/g/r/", storage.ListOptions{})
			if err != nil || len(r.Items) != 2 || string(r.Items[0].Value) != "v2" || r.Revision != b3.Revision {
				t.Fatalf("List after recovery: %d items at %d, %v; want a=v2, b=v3 at %d", len(r.Items), r.Revision, err, b3.Revision)
			}
			if !compacted {
				expect(t, w, watch.Modified, "/g/r/ns/a", "v2")
				expect(t, w, watch.Added, "/g/r/ns/b", "v3")
				return
			}
			if err := ended(t, w); !errors.Is(err, watch.ErrClosed) {
				t.Fatalf("watcher of the old history ended with %v; want ErrClosed", err)
			}
			_, err = f.c.Watch(t.Context(), "/g/r/", storage.WatchOptions{Recursive: true, Revision: a1.Revision})
			if !errors.Is(err, storage.ErrExpired) {
				t.Fatalf("re-watch from %d: %v; want ErrExpired", a1.Revision, err)
			}
			w2, err := f.c.Watch(t.Context(), "/g/r/", storage.WatchOptions{Recursive: true, Revision: r.Revision})
			if err != nil {
				t.Fatal(err)
			}
			defer w2.Stop()
			mustSet(t, f.c, "/g/r/ns/b", "v4")
			expect(t, w2, watch.Modified, "/g/r/ns/b", "v4")
		})
	}
}

// TestMemo: the cache hands out the backend's Memo of each state, so
// work memoized for a state is shared by the backend's and the cache's
// readers and watchers.
func TestMemo(t *testing.T) {
	f := newFixture(t, cache.Options{})
	w, err := f.c.Watch(t.Context(), "/g/r/", storage.WatchOptions{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	mustCreate(t, f.c, "/g/r/ns/a", "v1")
	fromBackend, err := f.m.Get(t.Context(), "/g/r/ns/a", storage.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fromCache, err := f.c.Get(t.Context(), "/g/r/ns/a", storage.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	listed, err := f.c.List(t.Context(), "/g/r/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ev, _ := next(t, w)
	memos := map[string]*storage.Memo{
		"cache Get":   fromCache.Memo,
		"cache List":  listed.Items[0].Memo,
		"cache Watch": ev.Object.(storage.Object).Memo,
	}
	for what, m := range memos {
		if m == nil || m != fromBackend.Memo {
			t.Errorf("%s: Memo %p; want the backend's %p", what, m, fromBackend.Memo)
		}
	}
}
