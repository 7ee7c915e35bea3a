package etcd3_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/etcd3"
	"github.com/kapi-dev/kapi/watch"
)

// next reads one event, failing after 5s.
func next(t *testing.T, w watch.Interface) (watch.Event, bool) {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		return ev, ok
	case <-time.After(5 * time.Second):
		t.Fatalf("no event within 5s")
		return watch.Event{}, false
	}
}

func mustCreate(t *testing.T, s *etcd3.Store, key string) storage.Object {
	t.Helper()
	o, err := s.Create(ctx(t), storage.Object{Key: key, Value: []byte(key)})
	if err != nil {
		t.Fatalf("Create(%s): %v", key, err)
	}
	return o
}

// TestWatchSlowConsumer: a consumer that lets the buffer fill misses
// nothing: the watch resumes from etcd's history once it reads again.
func TestWatchSlowConsumer(t *testing.T) {
	s := newStore(t, etcd3.Options{WatchBuffer: 2})
	w, err := s.Watch(ctx(t), "/g/r/", storage.WatchOptions{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	const n = 40
	var revs []uint64
	for i := range n {
		revs = append(revs, mustCreate(t, s, fmt.Sprintf("/g/r/ns/o%02d", i)).Revision)
	}
	for i := range n {
		ev, ok := next(t, w)
		if !ok || ev.Type != watch.Added || ev.Revision != revs[i] {
			t.Fatalf("event %d: %s at %d (open %v); want ADDED at %d", i, ev.Type, ev.Revision, ok, revs[i])
		}
	}
}

// TestWatchCompactedWhileSlow: a consumer so slow that etcd compacts the
// history it has still to read gets an ERROR event with ErrExpired.
func TestWatchCompactedWhileSlow(t *testing.T) {
	s := newStore(t, etcd3.Options{WatchBuffer: 1})
	w, err := s.Watch(ctx(t), "/g/r/", storage.WatchOptions{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for i := range 3 {
		mustCreate(t, s, fmt.Sprintf("/g/r/ns/a%d", i))
	}
	for len(w.ResultChan()) == 0 { // the watcher is now past its first event
		time.Sleep(time.Millisecond)
	}
	var last uint64
	for i := range 3 {
		last = mustCreate(t, s, fmt.Sprintf("/g/r/ns/b%d", i)).Revision
	}
	if err := s.Compact(ctx(t), last); err != nil {
		t.Fatal(err)
	}
	for {
		ev, ok := next(t, w)
		if !ok {
			t.Fatalf("watch closed without an ERROR event")
		}
		if ev.Type == watch.Error {
			if err, _ := ev.Object.(error); !errors.Is(err, storage.ErrExpired) {
				t.Fatalf("ERROR event with %v; want ErrExpired", ev.Object)
			}
			break
		}
		if ev.Revision >= last {
			t.Fatalf("%s at %d: want the ERROR event before the compacted revision %d", ev.Type, ev.Revision, last)
		}
	}
	if _, ok := next(t, w); ok {
		t.Fatalf("event after the ERROR event; want the channel closed")
	}
	if err := w.(interface{ Err() error }).Err(); !errors.Is(err, storage.ErrExpired) {
		t.Fatalf("Err() = %v; want ErrExpired", err)
	}
}

// TestWatchBookmarks: periodic bookmarks carry etcd's progress, which
// moves on with writes outside the watched keys.
func TestWatchBookmarks(t *testing.T) {
	s := newStore(t, etcd3.Options{BookmarkInterval: 20 * time.Millisecond})
	w, err := s.Watch(ctx(t), "/g/r/", storage.WatchOptions{Recursive: true, Bookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	elsewhere := mustCreate(t, s, "/g/other/x")
	for {
		ev, ok := next(t, w)
		if !ok || ev.Type != watch.Bookmark {
			t.Fatalf("got %s (open %v); want only bookmarks", ev.Type, ok)
		}
		if ev.Revision >= elsewhere.Revision {
			return
		}
	}
}

func TestWatchRequestBookmark(t *testing.T) {
	s := newStore(t, etcd3.Options{})
	w, err := s.Watch(ctx(t), "/g/r/", storage.WatchOptions{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	a := mustCreate(t, s, "/g/r/ns/a")
	if ev, _ := next(t, w); ev.Type != watch.Added {
		t.Fatalf("got %s; want ADDED", ev.Type)
	}
	w.(interface{ RequestBookmark() }).RequestBookmark()
	if ev, _ := next(t, w); ev.Type != watch.Bookmark || ev.Revision < a.Revision {
		t.Fatalf("got %s at %d; want BOOKMARK at %d or later", ev.Type, ev.Revision, a.Revision)
	}
}

// TestWatchClose: Close ends every watch and waits for its goroutine.
func TestWatchClose(t *testing.T) {
	s := newStore(t, etcd3.Options{})
	w, err := s.Watch(ctx(t), "/g/r/", storage.WatchOptions{Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, ok := next(t, w); ok {
		t.Fatalf("event after Close; want the channel closed")
	}
	if err := w.(interface{ Err() error }).Err(); !errors.Is(err, etcd3.ErrClosed) {
		t.Fatalf("Err() = %v; want ErrClosed", err)
	}
	if _, err := s.Watch(ctx(t), "/g/r/", storage.WatchOptions{}); !errors.Is(err, etcd3.ErrClosed) {
		t.Fatalf("Watch after Close: %v; want ErrClosed", err)
	}
}

// TestWatchNoLeak: stopped and cancelled watches leave no goroutine
// behind, neither ours nor the etcd client's per-watch ones.
func TestWatchNoLeak(t *testing.T) {
	s := newStore(t, etcd3.Options{})
	base := goroutines("etcd3.(*watcher)", "serveSubstream")
	c, cancel := context.WithCancel(t.Context())
	var ws []watch.Interface
	for i := range 20 {
		c := c
		if i%2 == 0 {
			c = t.Context()
		}
		w, err := s.Watch(c, "/g/r/", storage.WatchOptions{Recursive: true, Initial: i%3 == 0, Bookmarks: true})
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	mustCreate(t, s, "/g/r/ns/a")
	for i, w := range ws {
		if ev, _ := next(t, w); ev.Type != watch.Added {
			t.Fatalf("watch %d: got %s; want ADDED", i, ev.Type)
		}
		if i%2 == 0 {
			w.Stop()
		}
	}
	cancel()
	for _, w := range ws {
		for range w.ResultChan() {
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := goroutines("etcd3.(*watcher)", "serveSubstream")
		if n <= base {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d watch goroutines left (%d before):\n%s", n, base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// goroutines counts the goroutines whose stack mentions any of fns.
func goroutines(fns ...string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, fn := range fns {
			if strings.Contains(g, fn) {
				count++
				break
			}
		}
	}
	return count
}

// TestWriteMemoShared: the state a write made shares the write's Memo
// with a Get and with the events of every watch, so it is decoded and
// encoded once in this process; a Store that did not write it makes its
// own.
func TestWriteMemoShared(t *testing.T) {
	srv := <-pool
	t.Cleanup(func() { pool <- srv })
	prefix := fmt.Sprintf("/test%d", stores.Add(1))
	replica := func() *etcd3.Store {
		s, err := etcd3.New(t.Context(), etcd3.Options{Client: srv.client, Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	s := replica()
	var ws []watch.Interface
	for range 2 {
		w, err := s.Watch(ctx(t), "/g/r/", storage.WatchOptions{Recursive: true})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		ws = append(ws, w)
	}
	created := mustCreate(t, s, "/g/r/ns/a")
	got, err := s.Get(ctx(t), "/g/r/ns/a", storage.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Memo != created.Memo {
		t.Error("Get: a new Memo; want the create's")
	}
	for i, w := range ws {
		ev, _ := next(t, w)
		if o := ev.Object.(storage.Object); o.Memo != created.Memo {
			t.Errorf("watch %d: event with a new Memo; want the create's", i)
		}
	}
	updated, err := s.GuaranteedUpdate(ctx(t), "/g/r/ns/a", storage.UpdateOptions{}, func(cur storage.Object) (storage.Object, error) {
		cur.Value = []byte("v2")
		return cur, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Memo == created.Memo {
		t.Fatal("update: the created state's Memo; want the new state's own")
	}
	if ev, _ := next(t, ws[0]); ev.Object.(storage.Object).Memo != updated.Memo {
		t.Error("watch: MODIFIED event with a new Memo; want the update's")
	}
	if o, err := replica().Get(ctx(t), "/g/r/ns/a", storage.GetOptions{}); err != nil || o.Memo == updated.Memo || o.Memo == nil {
		t.Errorf("another replica's Get: Memo shared %v (err %v); want its own", o.Memo == updated.Memo, err)
	}
}
