package memory

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
)

var ctx = context.Background()

func obj(key, value string) storage.Object {
	return storage.Object{Key: key, Value: []byte(value), UID: "uid-" + key}
}

func mustCreate(t testing.TB, s *Store, key, value string) storage.Object {
	t.Helper()
	o, err := s.Create(ctx, obj(key, value))
	if err != nil {
		t.Fatalf("Create(%q): %v", key, err)
	}
	return o
}

func set(value string) storage.UpdateFunc {
	return func(cur storage.Object) (storage.Object, error) {
		cur.Value = []byte(value)
		return cur, nil
	}
}

func wantErr(t *testing.T, err, sentinel error) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("got error %v; want %v", err, sentinel)
	}
	if sentinel == nil {
		return
	}
	var se *storage.Error
	if !errors.As(err, &se) {
		t.Fatalf("got %T; want *storage.Error", err)
	}
}

func TestWrites(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	if r, _ := s.Revision(ctx); r != initialRevision {
		t.Fatalf("got revision %d on an empty store; want %d", r, initialRevision)
	}
	a := mustCreate(t, s, "/r/ns/a", "1")
	tests := []struct {
		name    string
		op      func() (storage.Object, error)
		wantErr error
		wantVal string
		wantRev uint64 // 0: unchanged store revision
	}{
		{"create existing", func() (storage.Object, error) { return s.Create(ctx, obj("/r/ns/a", "x")) }, storage.ErrExists, "", 0},
		{"create empty key", func() (storage.Object, error) { return s.Create(ctx, obj("", "x")) }, storage.ErrInvalid, "", 0},
		{"get", func() (storage.Object, error) { return s.Get(ctx, "/r/ns/a", storage.GetOptions{}) }, nil, "1", 0},
		{"get missing", func() (storage.Object, error) { return s.Get(ctx, "/r/ns/b", storage.GetOptions{}) }, storage.ErrNotFound, "", 0},
		{"update", func() (storage.Object, error) {
			return s.GuaranteedUpdate(ctx, "/r/ns/a", storage.UpdateOptions{}, set("2"))
		}, nil, "2", a.Revision + 1},
		{"update to the same state is a no-op", func() (storage.Object, error) {
			return s.GuaranteedUpdate(ctx, "/r/ns/a", storage.UpdateOptions{}, set("2"))
		}, nil, "2", 0},
		{"update missing", func() (storage.Object, error) {
			return s.GuaranteedUpdate(ctx, "/r/ns/b", storage.UpdateOptions{}, set("2"))
		}, storage.ErrNotFound, "", 0},
		{"update with stale revision", func() (storage.Object, error) {
			return s.GuaranteedUpdate(ctx, "/r/ns/a", storage.UpdateOptions{Preconditions: storage.Preconditions{Revision: a.Revision}}, set("3"))
		}, storage.ErrConflict, "", 0},
		{"update with wrong uid", func() (storage.Object, error) {
			return s.GuaranteedUpdate(ctx, "/r/ns/a", storage.UpdateOptions{Preconditions: storage.Preconditions{UID: "other"}}, set("3"))
		}, storage.ErrConflict, "", 0},
		{"update refused by fn", func() (storage.Object, error) {
			return s.GuaranteedUpdate(ctx, "/r/ns/a", storage.UpdateOptions{}, func(storage.Object) (storage.Object, error) {
				return storage.Object{}, errRefused
			})
		}, errRefused, "", 0},
		{"delete refused by validate", func() (storage.Object, error) {
			return s.Delete(ctx, "/r/ns/a", storage.DeleteOptions{Validate: func(storage.Object) error { return errRefused }})
		}, errRefused, "", 0},
		{"delete with wrong uid", func() (storage.Object, error) {
			return s.Delete(ctx, "/r/ns/a", storage.DeleteOptions{Preconditions: storage.Preconditions{UID: "other"}})
		}, storage.ErrConflict, "", 0},
		{"delete returns the last state", func() (storage.Object, error) {
			return s.Delete(ctx, "/r/ns/a", storage.DeleteOptions{Preconditions: storage.Preconditions{UID: a.UID, Revision: a.Revision + 1}})
		}, nil, "2", a.Revision + 2},
		{"delete missing", func() (storage.Object, error) {
			return s.Delete(ctx, "/r/ns/a", storage.DeleteOptions{})
		}, storage.ErrNotFound, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := s.Revision(ctx)
			got, err := tt.op()
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("got error %v; want %v", err, tt.wantErr)
			}
			if err == nil && string(got.Value) != tt.wantVal {
				t.Fatalf("got value %q; want %q", got.Value, tt.wantVal)
			}
			after, _ := s.Revision(ctx)
			want := tt.wantRev
			if want == 0 {
				want = before
			}
			if after != want {
				t.Fatalf("got store revision %d; want %d", after, want)
			}
		})
	}
}

var errRefused = errors.New("refused")

// TestConcurrentUpdates races writers on one key: every increment must
// land exactly once.
func TestConcurrentUpdates(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	mustCreate(t, s, "/c/n", "0")
	const writers, each = 8, 50
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				_, err := s.GuaranteedUpdate(ctx, "/c/n", storage.UpdateOptions{}, func(cur storage.Object) (storage.Object, error) {
					n, _ := strconv.Atoi(string(cur.Value))
					cur.Value = []byte(strconv.Itoa(n + 1))
					return cur, nil
				})
				if err != nil {
					t.Errorf("GuaranteedUpdate: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	got, _ := s.Get(ctx, "/c/n", storage.GetOptions{})
	if want := strconv.Itoa(writers * each); string(got.Value) != want {
		t.Fatalf("got counter %s; want %s", got.Value, want)
	}
	if want := uint64(initialRevision + 1 + writers*each); got.Revision != want {
		t.Fatalf("got revision %d; want %d", got.Revision, want)
	}
}

func TestDirectoryCounts(t *testing.T) {
	s := New(Options{})
	defer s.Close()
	for _, k := range []string{"/a/x/1", "/a/x/2", "/a/y/1", "/b/1"} {
		mustCreate(t, s, k, "v")
	}
	if _, err := s.Delete(ctx, "/a/x/2", storage.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, "/b/1", storage.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"": 2, "/": 2, "/a/": 2, "/a/x/": 1, "/a/y/": 1}
	if !maps.Equal(s.live.Dirs, want) {
		t.Fatalf("got counts %v; want %v", s.live.Dirs, want)
	}
}

func TestWaitForRevision(t *testing.T) {
	s := New(Options{Wait: 50 * time.Millisecond})
	defer s.Close()
	a := mustCreate(t, s, "/w/a", "1")
	tests := []struct {
		name  string
		match rv.Match
		rev   uint64
		write bool // a write arrives while waiting
		want  error
	}{
		{"not older than current", rv.NotOlderThan, a.Revision, false, nil},
		{"not older than the future", rv.NotOlderThan, a.Revision + 100, false, storage.ErrTooLarge},
		{"exact future", rv.Exact, a.Revision + 100, false, storage.ErrTooLarge},
		{"reached while waiting", rv.NotOlderThan, a.Revision + 1, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.write {
				s.opts.Wait = time.Minute // the write must end the wait
				go s.GuaranteedUpdate(ctx, "/w/a", storage.UpdateOptions{}, set(tt.name))
			}
			_, err := s.Get(ctx, "/w/a", storage.GetOptions{Match: tt.match, Revision: tt.rev})
			wantErr(t, err, tt.want)
			_, err = s.List(ctx, "/w/", storage.ListOptions{Match: tt.match, Revision: tt.rev})
			wantErr(t, err, tt.want)
			s.opts.Wait = 50 * time.Millisecond
		})
	}
	t.Run("bounded by ctx", func(t *testing.T) {
		s.opts.Wait = time.Minute
		c, cancel := context.WithTimeout(ctx, time.Millisecond)
		defer cancel()
		_, err := s.Get(c, "/w/a", storage.GetOptions{Match: rv.NotOlderThan, Revision: 1 << 40})
		wantErr(t, err, storage.ErrTooLarge)
	})
}

// model is the expected state at every revision, for history tests.
type model map[uint64]map[string]string

// randomHistory applies n random writes to keys under /m/ and records the
// state after each.
func randomHistory(t *testing.T, s *Store, n int, seed uint64) model {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	m := model{}
	state := map[string]string{}
	m[initialRevision] = maps.Clone(state)
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("/m/%s/k%02d", []string{"a", "b"}[r.IntN(2)], r.IntN(20))
		v := strconv.Itoa(i)
		var o storage.Object
		var err error
		if _, ok := state[k]; !ok {
			o, err = s.Create(ctx, obj(k, v))
			state[k] = v
		} else if r.IntN(3) == 0 {
			o, err = s.Delete(ctx, k, storage.DeleteOptions{})
			o.Revision, _ = s.Revision(ctx)
			delete(state, k)
		} else {
			o, err = s.GuaranteedUpdate(ctx, k, storage.UpdateOptions{}, set(v))
			state[k] = v
		}
		if err != nil {
			t.Fatal(err)
		}
		m[o.Revision] = maps.Clone(state)
	}
	return m
}

func asMap(items []storage.Object) map[string]string {
	m := map[string]string{}
	for _, o := range items {
		m[o.Key] = string(o.Value)
	}
	return m
}

// TestExactReads checks Get and List at every revision of a random
// history against the recorded states, from the log and from cached
// snapshots.
func TestExactReads(t *testing.T) {
	s := New(Options{Snapshots: 4})
	defer s.Close()
	m := randomHistory(t, s, 300, 1)
	for _, rev := range slices.Sorted(maps.Keys(m)) {
		want := m[rev]
		for _, pass := range []string{"history", "snapshot"} {
			res, err := s.List(ctx, "/m/", storage.ListOptions{Match: rv.Exact, Revision: rev})
			if err != nil {
				t.Fatalf("%s: List at %d: %v", pass, rev, err)
			}
			if got := asMap(res.Items); !maps.Equal(got, want) || res.Revision != rev {
				t.Fatalf("%s: List at %d: got %v at %d; want %v", pass, rev, got, res.Revision, want)
			}
			for _, k := range []string{"/m/a/k03", "/m/b/k07", "/m/a/k11"} {
				o, err := s.Get(ctx, k, storage.GetOptions{Match: rv.Exact, Revision: rev})
				v, ok := want[k]
				if !ok {
					if !errors.Is(err, storage.ErrNotFound) {
						t.Fatalf("%s: Get(%s) at %d: got %v, %v; want ErrNotFound", pass, k, rev, o, err)
					}
					continue
				}
				if err != nil || string(o.Value) != v {
					t.Fatalf("%s: Get(%s) at %d: got %q, %v; want %q", pass, k, rev, o.Value, err, v)
				}
			}
		}
	}
}

func TestCompaction(t *testing.T) {
	now := time.Unix(0, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := New(Options{History: time.Minute, Clock: clock})
	defer s.Close()
	for i := range 600 {
		mustCreate(t, s, fmt.Sprintf("/x/%04d", i), "v")
	}
	cur, _ := s.Revision(ctx)
	if _, err := s.Get(ctx, "/x/0000", storage.GetOptions{Match: rv.Exact, Revision: 2}); err != nil {
		t.Fatalf("Get at 2 before compaction: %v", err)
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	for i := range 300 { // ages are checked when the log starts a segment
		mustCreate(t, s, fmt.Sprintf("/x/new%03d", i), "v")
	}
	oldest := s.log.Oldest()
	if oldest <= 2 || oldest >= cur {
		t.Fatalf("got oldest revision %d after aging; want in (2, %d)", oldest, cur)
	}
	_, err := s.Get(ctx, "/x/0000", storage.GetOptions{Match: rv.Exact, Revision: 2})
	wantErr(t, err, storage.ErrExpired)
	_, err = s.List(ctx, "/x/", storage.ListOptions{Match: rv.Exact, Revision: 2})
	wantErr(t, err, storage.ErrExpired)
	_, err = s.Watch(ctx, "/x/", storage.WatchOptions{Recursive: true, Revision: 2})
	wantErr(t, err, storage.ErrExpired)

	if err := s.Compact(ctx, cur); err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(ctx, "/x/", storage.ListOptions{Match: rv.Exact, Revision: cur}); err != nil {
		t.Fatalf("List at the compacted revision: %v", err)
	}
	_, err = s.List(ctx, "/x/", storage.ListOptions{Match: rv.Exact, Revision: cur - 1})
	wantErr(t, err, storage.ErrExpired)
	latest, _ := s.Revision(ctx)
	wantErr(t, s.Compact(ctx, latest+1), storage.ErrTooLarge)
}

// TestMemoPerState checks that every reader of one state shares its Memo
// (Get, List, watch events) and that each write starts a new one.
func TestMemoPerState(t *testing.T) {
	s := New(Options{})
	w, err := s.Watch(ctx, "/a", storage.WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	created := mustCreate(t, s, "/a", "v1")
	got, err := s.Get(ctx, "/a", storage.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.List(ctx, "/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ev := <-w.ResultChan()
	if created.Memo == nil || got.Memo != created.Memo || l.Items[0].Memo != created.Memo || ev.Object.(storage.Object).Memo != created.Memo {
		t.Errorf("Memo of one state: create %p, get %p, list %p, event %p; want one shared pointer",
			created.Memo, got.Memo, l.Items[0].Memo, ev.Object.(storage.Object).Memo)
	}
	updated, err := s.GuaranteedUpdate(ctx, "/a", storage.UpdateOptions{}, set("v2"))
	if err != nil {
		t.Fatal(err)
	}
	if updated.Memo == nil || updated.Memo == created.Memo {
		t.Errorf("update kept the old state's Memo; want a new one")
	}
}

// TestUpdateSharesUnchangedAttributes: an update whose labels and fields
// equal the current state's stores the current maps, not the caller's
// copies; changed ones are stored as given.
func TestUpdateSharesUnchangedAttributes(t *testing.T) {
	s := New(Options{})
	sameMap := func(a, b map[string]string) bool {
		return fmt.Sprintf("%p", a) == fmt.Sprintf("%p", b)
	}
	cur, err := s.Create(ctx, storage.Object{Key: "/a", Value: []byte("v1"),
		Labels: map[string]string{"app": "x"}, Fields: map[string]string{"metadata.name": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	next, err := s.GuaranteedUpdate(ctx, "/a", storage.UpdateOptions{}, func(storage.Object) (storage.Object, error) {
		return storage.Object{Value: []byte("v2"), Labels: map[string]string{"app": "x"}, Fields: map[string]string{"metadata.name": "a"}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sameMap(next.Labels, cur.Labels) || !sameMap(next.Fields, cur.Fields) {
		t.Errorf("equal labels and fields stored as new maps; want the current state's")
	}
	changed := map[string]string{"app": "y"}
	next, err = s.GuaranteedUpdate(ctx, "/a", storage.UpdateOptions{}, func(storage.Object) (storage.Object, error) {
		return storage.Object{Value: []byte("v3"), Labels: changed}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sameMap(next.Labels, changed) || next.Fields != nil {
		t.Errorf("update stored labels %v, fields %v; want the caller's labels and no fields", next.Labels, next.Fields)
	}
}

// TestRestoredState: a store started at a revision with objects serves
// them with their own revisions, hands out the revisions after it, and
// answers ErrExpired before it (its history starts there).
func TestRestoredState(t *testing.T) {
	objs := []storage.Object{obj("/r/a", "1"), obj("/r/b", "2"), obj("/r/c", "3")}
	objs[0].Revision, objs[1].Revision = 7, 40
	s := New(Options{Revision: 40, Objects: slices.Values(objs)})
	defer s.Close()
	tests := []struct {
		name    string
		key     string
		opts    storage.GetOptions
		wantRev uint64
		wantErr error
	}{
		{"own revision", "/r/a", storage.GetOptions{}, 7, nil},
		{"at the start", "/r/b", storage.GetOptions{}, 40, nil},
		{"no revision given: the start", "/r/c", storage.GetOptions{}, 40, nil},
		{"exact at the start", "/r/a", storage.GetOptions{Match: rv.Exact, Revision: 40}, 7, nil},
		{"exact before the start", "/r/a", storage.GetOptions{Match: rv.Exact, Revision: 39}, 0, storage.ErrExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := s.Get(ctx, tt.key, tt.opts)
			if tt.wantErr != nil {
				wantErr(t, err, tt.wantErr)
				return
			}
			if err != nil || o.Revision != tt.wantRev {
				t.Fatalf("Get: revision %d, %v; want %d", o.Revision, err, tt.wantRev)
			}
		})
	}
	if r, _ := s.Revision(ctx); r != 40 || s.Oldest() != 40 {
		t.Fatalf("revision %d, oldest %d; want 40, 40", r, s.Oldest())
	}
	res, err := s.List(ctx, "/r/", storage.ListOptions{Limit: 2})
	if err != nil || len(res.Items) != 2 || res.Remaining == nil || *res.Remaining != 1 {
		t.Fatalf("List: %v, %v; want 2 items and 1 remaining", res, err)
	}
	if d := mustCreate(t, s, "/r/d", "4"); d.Revision != 41 {
		t.Fatalf("first write at %d; want 41", d.Revision)
	}
	_, err = s.Watch(ctx, "/r/", storage.WatchOptions{Recursive: true, Revision: 39})
	wantErr(t, err, storage.ErrExpired)
}
