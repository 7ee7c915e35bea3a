package durable_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/durable"
	"github.com/kapi-dev/kapi/watch"
)

func open(t *testing.T, dir string, opts durable.Options) *durable.Store {
	t.Helper()
	s, err := durable.Open(dir, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func obj(key, value string) storage.Object {
	return storage.Object{Key: key, Value: []byte(value), UID: "uid-" + key,
		Labels: map[string]string{"app": "x"}, Fields: map[string]string{"metadata.name": key}}
}

func set(value string) storage.UpdateFunc {
	return func(cur storage.Object) (storage.Object, error) {
		cur.Value = []byte(value)
		return cur, nil
	}
}

// history is what a test wrote: the state after each revision.
type history map[uint64]map[string]string

// write applies ops ("+k=v" create, "~k=v" update, "-k" delete) and
// records the state after each.
func write(t *testing.T, s storage.Interface, h history, state map[string]string, ops ...string) {
	t.Helper()
	for _, op := range ops {
		var o storage.Object
		var err error
		k, v, _ := cutEq(op[1:])
		switch op[0] {
		case '+':
			o, err = s.Create(t.Context(), obj(k, v))
			state[k] = v
		case '~':
			o, err = s.GuaranteedUpdate(t.Context(), k, storage.UpdateOptions{}, set(v))
			state[k] = v
		case '-':
			_, err = s.Delete(t.Context(), k, storage.DeleteOptions{})
			o.Revision, _ = s.Revision(t.Context())
			delete(state, k)
		}
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		h[o.Revision] = maps.Clone(state)
	}
}

func cutEq(s string) (string, string, bool) {
	for i := range s {
		if s[i] == '=' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func listAt(t *testing.T, s storage.Interface, rev uint64) (map[string]string, error) {
	t.Helper()
	res, err := s.List(t.Context(), "/", storage.ListOptions{Match: rv.Exact, Revision: rev})
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, o := range res.Items {
		m[o.Key] = string(o.Value)
	}
	return m, nil
}

// TestRestart writes, closes, reopens and checks that the state, every
// revision of the history and the revision counter came back: reads at
// each old revision, and a watch from the first, replay what was
// written before the restart.
func TestRestart(t *testing.T) {
	tests := []struct {
		name     string
		opts     durable.Options
		restarts int
	}{
		{"one restart", durable.Options{}, 1},
		{"three restarts", durable.Options{}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			h, state := history{}, map[string]string{}
			start := uint64(0)
			for i := range tt.restarts + 1 {
				s, err := durable.Open(dir, tt.opts)
				if err != nil {
					t.Fatalf("open %d: %v", i, err)
				}
				rev, _ := s.Revision(t.Context())
				if i == 0 {
					start = rev
					h[rev] = map[string]string{}
				} else if want := slices.Max(slices.Collect(maps.Keys(h))); rev != want {
					t.Fatalf("open %d: revision %d; want %d, the last before the restart", i, rev, want)
				}
				// Every revision written so far reads as it was.
				for r, want := range h {
					got, err := listAt(t, s, r)
					if err != nil || !maps.Equal(got, want) {
						t.Fatalf("open %d: list at %d: %v, %v; want %v", i, r, got, err, want)
					}
				}
				// A watch from the first revision replays every change.
				w, err := s.Watch(t.Context(), "/", storage.WatchOptions{Recursive: true, Revision: start})
				if err != nil {
					t.Fatalf("open %d: watch from %d: %v", i, start, err)
				}
				replayed := map[string]string{}
				for range len(h) - 1 {
					select {
					case e := <-w.ResultChan():
						o := e.Object.(storage.Object)
						if e.Type == watch.Deleted {
							delete(replayed, o.Key)
						} else {
							replayed[o.Key] = string(o.Value)
						}
						if !maps.Equal(replayed, h[e.Revision]) {
							t.Fatalf("open %d: after the event at %d: %v; want %v", i, e.Revision, replayed, h[e.Revision])
						}
					case <-time.After(10 * time.Second):
						t.Fatalf("open %d: watch replay stalled", i)
					}
				}
				w.Stop()
				p := fmt.Sprintf("/r%d/", i)
				write(t, s, h, state, "+"+p+"a=1", "+"+p+"b=1", "~"+p+"a=2", "-"+p+"b", "+"+p+"b=3")
				if i > 0 {
					write(t, s, h, state, fmt.Sprintf("~/r%d/a=again", i-1), fmt.Sprintf("-/r%d/b", i-1))
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestCompactionSurvivesRestart: what Compact or the history bounds
// dropped stays dropped after a restart (ErrExpired), and what they kept
// stays readable.
func TestCompactionSurvivesRestart(t *testing.T) {
	tests := []struct {
		name string
		opts durable.Options
		// compact: whether the test calls Compact at the midpoint.
		compact bool
	}{
		{"Compact", durable.Options{}, true},
		{"by size", durable.Options{MaxEvents: 64}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, dir, tt.opts)
			h, state := history{}, map[string]string{}
			for i := range 300 {
				write(t, s, h, state, fmt.Sprintf("+/k/%03d=%d", i, i))
			}
			mid, _ := s.Revision(t.Context())
			if tt.compact {
				if err := s.Compact(t.Context(), mid); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 300 {
				write(t, s, h, state, fmt.Sprintf("~/k/%03d=u%d", i, i))
			}
			last, _ := s.Revision(t.Context())
			s.Close()

			s = open(t, dir, tt.opts)
			if rev, _ := s.Revision(t.Context()); rev != last {
				t.Fatalf("revision %d after reopening; want %d", rev, last)
			}
			if _, err := listAt(t, s, mid-1); !errors.Is(err, storage.ErrExpired) {
				t.Fatalf("list at %d, before the compaction: %v; want ErrExpired", mid-1, err)
			}
			got, err := listAt(t, s, last)
			if err != nil || !maps.Equal(got, h[last]) {
				t.Fatalf("list at %d: %d keys, %v; want %d keys", last, len(got), err, len(h[last]))
			}
			if tt.compact {
				if got, err := listAt(t, s, mid); err != nil || !maps.Equal(got, h[mid]) {
					t.Fatalf("list at the compacted revision %d: %d keys, %v; want %d keys", mid, len(got), err, len(h[mid]))
				}
			}
		})
	}
}

// TestLargeCompaction: a compaction of more changes than one
// transaction folds (many writers' creates, then Compact) keeps every
// object, across a restart.
func TestLargeCompaction(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, durable.Options{})
	const writers, each = 32, 160 // 5120 creates: more than two folds' worth
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := s.Create(t.Context(), obj(fmt.Sprintf("/k/%02d/%03d", w, i), "v")); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	rev, _ := s.Revision(t.Context())
	if err := s.Compact(t.Context(), rev); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = open(t, dir, durable.Options{})
	res, err := s.List(t.Context(), "/k/", storage.ListOptions{Match: rv.Exact, Revision: rev})
	if err != nil || len(res.Items) != writers*each {
		t.Fatalf("list at the compacted revision %d after reopening: %d items, %v; want %d", rev, len(res.Items), err, writers*each)
	}
	if _, err := listAt(t, s, rev-1); !errors.Is(err, storage.ErrExpired) {
		t.Fatalf("list before the compaction: %v; want ErrExpired", err)
	}
}

// TestOpenBoundsHistory: a store reopened with a smaller MaxEvents than
// its file's log holds keeps the state whole and the last MaxEvents
// changes as history, for reads and watches; older revisions are
// ErrExpired.
func TestOpenBoundsHistory(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, durable.Options{})
	h, state := history{}, map[string]string{}
	for i := range 100 {
		write(t, s, h, state, fmt.Sprintf("+/k/%03d=%d", i, i))
		if i%3 == 0 {
			write(t, s, h, state, fmt.Sprintf("-/k/%03d", i))
		}
	}
	last, _ := s.Revision(t.Context())
	s.Close()

	const keep = 40
	s = open(t, dir, durable.Options{MaxEvents: keep})
	if rev, _ := s.Revision(t.Context()); rev != last {
		t.Fatalf("revision %d after reopening; want %d", rev, last)
	}
	for _, at := range []uint64{last, last - keep} {
		if got, err := listAt(t, s, at); err != nil || !maps.Equal(got, h[at]) {
			t.Fatalf("list at %d: %d keys, %v; want %d keys", at, len(got), err, len(h[at]))
		}
	}
	if _, err := listAt(t, s, last-keep-1); !errors.Is(err, storage.ErrExpired) {
		t.Fatalf("list at %d, before the kept history: %v; want ErrExpired", last-keep-1, err)
	}
	w, err := s.Watch(t.Context(), "/", storage.WatchOptions{Recursive: true, Revision: last - keep})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for want := last - keep + 1; want <= last; want++ {
		select {
		case e := <-w.ResultChan():
			if e.Revision != want {
				t.Fatalf("watch event at %d; want %d", e.Revision, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no event at %d", want)
		}
	}
}
