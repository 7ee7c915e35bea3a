package memory

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// ev is an event as the tests compare it.
type ev struct {
	Type  watch.EventType
	Rev   uint64
	Key   string
	Value string
}

func (e ev) String() string { return fmt.Sprintf("%s@%d %s=%s", e.Type, e.Rev, e.Key, e.Value) }

func next(t *testing.T, w watch.Interface) ev {
	t.Helper()
	select {
	case e, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch ended early")
		}
		if e.Type == watch.Bookmark {
			return ev{Type: e.Type, Rev: e.Revision}
		}
		o := e.Object.(storage.Object)
		return ev{Type: e.Type, Rev: e.Revision, Key: o.Key, Value: string(o.Value)}
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return ev{}
}

func nextN(t *testing.T, w watch.Interface, n int) []ev {
	t.Helper()
	var got []ev
	for range n {
		got = append(got, next(t, w))
	}
	return got
}

func TestWatch(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	a := mustCreate(t, s, "/w/ns/a", "1") // rev 2
	mustCreate(t, s, "/w/ns/b", "1")      // rev 3
	mustCreate(t, s, "/w/other/c", "1")   // rev 4
	r := a.Revision
	blue := storage.Predicate{Label: storage.Selector{{Key: "color", Op: storage.Equals, Values: []string{"blue"}}}}
	paint := func(color string) storage.UpdateFunc {
		return func(cur storage.Object) (storage.Object, error) {
			cur.Labels = map[string]string{"color": color}
			cur.Value = []byte(color)
			return cur, nil
		}
	}
	tests := []struct {
		name string
		key  string
		opts storage.WatchOptions
		want []ev
	}{
		{"prefix from a revision", "/w/ns/", storage.WatchOptions{Recursive: true, Revision: r},
			[]ev{{watch.Added, r + 1, "/w/ns/b", "1"}, {watch.Modified, r + 3, "/w/ns/a", "blue"}, {watch.Modified, r + 4, "/w/ns/a", "red"}, {watch.Deleted, r + 5, "/w/ns/b", "1"}}},
		{"one key", "/w/ns/a", storage.WatchOptions{Revision: r},
			[]ev{{watch.Modified, r + 3, "/w/ns/a", "blue"}, {watch.Modified, r + 4, "/w/ns/a", "red"}}},
		{"initial state", "/w/", storage.WatchOptions{Recursive: true, Initial: true, InitialEnd: true},
			[]ev{{watch.Added, r, "/w/ns/a", "1"}, {watch.Added, r + 1, "/w/ns/b", "1"}, {watch.Added, r + 2, "/w/other/c", "1"}, {watch.Bookmark, r + 2, "", ""},
				{watch.Modified, r + 3, "/w/ns/a", "blue"}, {watch.Modified, r + 4, "/w/ns/a", "red"}, {watch.Deleted, r + 5, "/w/ns/b", "1"}}},
		{"initial state of one key", "/w/ns/b", storage.WatchOptions{Initial: true},
			[]ev{{watch.Added, r + 1, "/w/ns/b", "1"}, {watch.Deleted, r + 5, "/w/ns/b", "1"}}},
		{"selector transitions", "/w/", storage.WatchOptions{Recursive: true, Revision: r + 2, Predicate: blue},
			[]ev{{watch.Added, r + 3, "/w/ns/a", "blue"}, {watch.Deleted, r + 4, "/w/ns/a", "blue"}}},
		{"from now", "/w/", storage.WatchOptions{Recursive: true},
			[]ev{{watch.Modified, r + 3, "/w/ns/a", "blue"}, {watch.Modified, r + 4, "/w/ns/a", "red"}, {watch.Deleted, r + 5, "/w/ns/b", "1"}}},
	}
	var ws []watch.Interface
	for _, tt := range tests {
		w, err := s.Watch(ctx, tt.key, tt.opts)
		if err != nil {
			t.Fatalf("%s: Watch: %v", tt.name, err)
		}
		defer w.Stop()
		ws = append(ws, w)
	}
	if _, err := s.GuaranteedUpdate(ctx, "/w/ns/a", storage.UpdateOptions{}, paint("blue")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GuaranteedUpdate(ctx, "/w/ns/a", storage.UpdateOptions{}, paint("red")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, "/w/ns/b", storage.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Sentinels every watch sees next, so nothing extra slips through.
	end := func(cur storage.Object) (storage.Object, error) {
		cur.Labels = map[string]string{"color": "blue"}
		cur.Value = []byte("end")
		return cur, nil
	}
	if _, err := s.GuaranteedUpdate(ctx, "/w/ns/a", storage.UpdateOptions{}, end); err != nil {
		t.Fatal(err)
	}
	b, _ := end(obj("/w/ns/b", ""))
	if _, err := s.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := nextN(t, ws[i], len(tt.want))
			if !slices.Equal(got, tt.want) {
				t.Fatalf("got %v; want %v", got, tt.want)
			}
			if e := next(t, ws[i]); e.Value != "end" {
				t.Fatalf("got %v after the expected events; want the end sentinel", e)
			}
		})
	}
}

func TestWatchErrors(t *testing.T) {
	s := New(Options{Wait: 10 * time.Millisecond})
	defer s.Close()
	mustCreate(t, s, "/x/a", "1")
	cur, _ := s.Revision(ctx)
	mustCreate(t, s, "/x/b", "1")
	if err := s.Compact(ctx, cur); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		rev  uint64
		want error
	}{
		{"compacted", cur - 1, storage.ErrExpired},
		{"at compaction", cur, nil},
		{"too large", cur + 100, storage.ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := s.Watch(ctx, "/x/", storage.WatchOptions{Recursive: true, Revision: tt.rev})
			wantErr(t, err, tt.want)
			if err == nil {
				defer w.Stop()
				if e := next(t, w); e.Key != "/x/b" {
					t.Fatalf("got %v; want the ADDED of /x/b", e)
				}
			}
		})
	}
}

func TestWatchBookmarks(t *testing.T) {
	s := New(Options{BookmarkInterval: time.Millisecond})
	defer s.Close()
	w, err := s.Watch(ctx, "/b/", storage.WatchOptions{Recursive: true, Bookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	o := mustCreate(t, s, "/b/a", "1")
	mustCreate(t, s, "/other/a", "1") // not watched, still advances bookmarks
	cur, _ := s.Revision(ctx)
	var seen bool
	for {
		e := next(t, w)
		switch {
		case e.Type == watch.Added:
			if e.Rev != o.Revision {
				t.Fatalf("got %v; want ADDED at %d", e, o.Revision)
			}
			seen = true
		case e.Type == watch.Bookmark && e.Rev >= o.Revision && !seen:
			t.Fatalf("got bookmark at %d before the event at %d", e.Rev, o.Revision)
		case e.Type == watch.Bookmark && e.Rev > cur:
			t.Fatalf("got bookmark at %d; want at most %d", e.Rev, cur)
		case e.Type == watch.Bookmark && e.Rev == cur:
			return
		}
	}
}
