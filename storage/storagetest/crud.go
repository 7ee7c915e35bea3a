package storagetest

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

var createTests = []test{
	{"RoundTrip", func(t *testing.T, s storage.Interface) {
		in := obj("/g/r/ns1/a", "", "app=web", "tier=front")
		in.Value = []byte{0, '{', 0xff, '"', '\n', 0x80, '}'}
		in.Revision = 999 // ignored on write
		got := create(t, s, in)
		if got.Revision == 0 || got.Revision == 999 {
			t.Fatalf("Create: got revision %d; want the store's next revision", got.Revision)
		}
		want := in
		want.Revision = got.Revision
		sameObj(t, "Create result", got, want)
		sameObj(t, "Get after Create", get(t, s, in.Key, rv.MostRecent, 0), want)
		if r := revision(t, s); r != got.Revision {
			t.Fatalf("Revision() = %d; want %d, the last write's", r, got.Revision)
		}
	}},
	{"Exists", func(t *testing.T, s storage.Interface) {
		first := create(t, s, obj("/g/r/ns1/a", "v1"))
		_, err := s.Create(t.Context(), obj("/g/r/ns1/a", "v2"))
		se := wantErr(t, "second Create", err, storage.ErrExists)
		if se.Key != "/g/r/ns1/a" {
			t.Errorf("error key = %q; want %q", se.Key, "/g/r/ns1/a")
		}
		sameObj(t, "Get after refused Create", get(t, s, "/g/r/ns1/a", rv.MostRecent, 0), first)
		if r := revision(t, s); r != first.Revision {
			t.Errorf("Revision() = %d after a refused Create; want %d", r, first.Revision)
		}
	}},
	{"RevisionsIncrease", func(t *testing.T, s storage.Interface) {
		var last uint64
		for i, k := range []string{"/g/r/ns1/b", "/g/r/ns1/a", "/g/r2/ns1/a", "/g/r/ns2/a", "/g/c/x"} {
			o := create(t, s, obj(k, strconv.Itoa(i)))
			if o.Revision <= last {
				t.Fatalf("Create(%s): revision %d; want more than the previous write's %d", k, o.Revision, last)
			}
			last = o.Revision
			if r := revision(t, s); r != last {
				t.Fatalf("Revision() = %d; want %d, the last write's", r, last)
			}
		}
		u := put(t, s, "/g/r/ns1/a", "x")
		if u.Revision <= last {
			t.Fatalf("update revision %d; want more than %d", u.Revision, last)
		}
		del(t, s, "/g/r/ns1/b")
		if r := revision(t, s); r <= u.Revision {
			t.Fatalf("Revision() = %d after Delete; want more than %d", r, u.Revision)
		}
	}},
	{"Concurrent", func(t *testing.T, s storage.Interface) {
		// Racing creates of one key: exactly one wins.
		const n = 8
		errs := make(chan error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.Create(t.Context(), obj("/g/r/ns1/a", strconv.Itoa(i)))
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		won := 0
		for err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, storage.ErrExists):
				t.Errorf("racing Create: %v; want nil or ErrExists", err)
			}
		}
		if won != 1 {
			t.Errorf("%d racing Creates of one key succeeded; want 1", won)
		}
	}},
}

var getTests = []test{
	{"NotFound", func(t *testing.T, s storage.Interface) {
		create(t, s, obj("/g/r/ns1/ab", "v"))
		for _, k := range []string{"/g/r/ns1/a", "/g/r/ns1/abc", "/g/r/ns1/", "/g/r/ns1"} {
			_, err := s.Get(t.Context(), k, storage.GetOptions{})
			se := wantErr(t, "Get "+k, err, storage.ErrNotFound)
			if se.Key != k {
				t.Errorf("Get %s: error key %q; want %q", k, se.Key, k)
			}
		}
	}},
	{"Match", func(t *testing.T, s storage.Interface) {
		v1 := create(t, s, obj("/g/r/ns1/a", "v1"))
		other := create(t, s, obj("/g/r/ns1/b", "b"))
		v2 := put(t, s, "/g/r/ns1/a", "v2")
		create(t, s, obj("/g/r/ns1/c", "c"))
		cur := revision(t, s)
		tests := []struct {
			name string
			m    rv.Match
			rev  uint64
			want storage.Object
		}{
			{"MostRecent", rv.MostRecent, 0, v2},
			{"NotOlderThan current", rv.NotOlderThan, cur, v2},
			{"NotOlderThan after the update", rv.NotOlderThan, v2.Revision, v2},
			{"Exact current", rv.Exact, cur, v2},
			{"Exact at the update", rv.Exact, v2.Revision, v2},
			{"Exact before the update", rv.Exact, other.Revision, v1},
			{"Exact at the create", rv.Exact, v1.Revision, v1},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				sameObj(t, "Get", get(t, s, "/g/r/ns1/a", tt.m, tt.rev), tt.want)
			})
		}
		t.Run("Any", func(t *testing.T) {
			got := get(t, s, "/g/r/ns1/a", rv.Any, 0)
			if got.Revision != v1.Revision && got.Revision != v2.Revision {
				t.Fatalf("Get Any: got %s; want one of its states", show(got))
			}
		})
		t.Run("Exact before it existed", func(t *testing.T) {
			_, err := s.Get(t.Context(), "/g/r/ns1/c", storage.GetOptions{Match: rv.Exact, Revision: v2.Revision})
			wantErr(t, "Get Exact before create", err, storage.ErrNotFound)
		})
	}},
	{"TooLarge", func(t *testing.T, s storage.Interface) {
		create(t, s, obj("/g/r/ns1/a", "v"))
		cur := revision(t, s)
		for _, m := range []rv.Match{rv.NotOlderThan, rv.Exact} {
			_, err := s.Get(ctxTimeout(t), "/g/r/ns1/a", storage.GetOptions{Match: m, Revision: cur + 10})
			wantErr(t, "Get "+m.String()+" of a future revision", err, storage.ErrTooLarge)
			_, err = s.List(ctxTimeout(t), "/g/r/", storage.ListOptions{Match: m, Revision: cur + 10})
			wantErr(t, "List "+m.String()+" of a future revision", err, storage.ErrTooLarge)
		}
	}},
	{"TooLargeContext", func(t *testing.T, s storage.Interface) {
		create(t, s, obj("/g/r/ns1/a", "v"))
		cur := revision(t, s)
		ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
		defer cancel()
		var err error
		within(t, "Get with a 1ms deadline of a future revision", func() {
			_, err = s.Get(ctx, "/g/r/ns1/a", storage.GetOptions{Match: rv.NotOlderThan, Revision: cur + 1})
		})
		if !errors.Is(err, storage.ErrTooLarge) && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Get with an expired context: %v; want ErrTooLarge or context.DeadlineExceeded", err)
		}
	}},
	{"WaitsForRevision", func(t *testing.T, s storage.Interface) {
		// Reads of the next revision, with the write landing while they
		// wait, return the new state instead of ErrTooLarge.
		create(t, s, obj("/g/r/ns1/a", "v1"))
		next := revision(t, s) + 1
		ctx := ctxTimeout(t)
		gets, lists := make(chan error, 1), make(chan error, 1)
		var got storage.Object
		var page storage.ListResult
		go func() {
			var err error
			got, err = s.Get(ctx, "/g/r/ns1/a", storage.GetOptions{Match: rv.NotOlderThan, Revision: next})
			gets <- err
		}()
		go func() {
			var err error
			page, err = s.List(ctx, "/g/r/", storage.ListOptions{Match: rv.NotOlderThan, Revision: next})
			lists <- err
		}()
		v2 := put(t, s, "/g/r/ns1/a", "v2")
		if err := <-gets; err != nil {
			t.Fatalf("Get NotOlderThan %d with the write landing during the wait: %v; want the new state", next, err)
		}
		sameObj(t, "Get NotOlderThan the next revision", got, v2)
		if err := <-lists; err != nil {
			t.Fatalf("List NotOlderThan %d with the write landing during the wait: %v; want the new state", next, err)
		}
		if page.Revision < next || !eqStrings(keys(page.Items), []string{"/g/r/ns1/a=v2"}) {
			t.Fatalf("List NotOlderThan %d: got %q at %d; want [a=v2] at %d or later", next, keys(page.Items), page.Revision, next)
		}
	}},
}

var deleteTests = []test{
	{"LastState", func(t *testing.T, s storage.Interface) {
		create(t, s, obj("/g/r/ns1/a", "v1", "app=web"))
		last := put(t, s, "/g/r/ns1/a", "v2")
		got := del(t, s, "/g/r/ns1/a")
		after := revision(t, s)
		if after <= last.Revision {
			t.Fatalf("Revision() = %d after Delete; want more than %d", after, last.Revision)
		}
		atDelete := last
		atDelete.Revision = after // the last state, at the delete's revision
		sameObj(t, "Delete result", got, atDelete)
		_, err := s.Get(t.Context(), "/g/r/ns1/a", storage.GetOptions{})
		wantErr(t, "Get after Delete", err, storage.ErrNotFound)
		sameObj(t, "Get Exact before the Delete", get(t, s, "/g/r/ns1/a", rv.Exact, after-1), last)
		_, err = s.Get(t.Context(), "/g/r/ns1/a", storage.GetOptions{Match: rv.Exact, Revision: after})
		wantErr(t, "Get Exact at the Delete", err, storage.ErrNotFound)
		_, err = s.Delete(t.Context(), "/g/r/ns1/a", storage.DeleteOptions{})
		wantErr(t, "second Delete", err, storage.ErrNotFound)

		again := create(t, s, obj("/g/r/ns1/a", "v3"))
		if again.Revision <= after {
			t.Fatalf("re-Create revision %d; want more than %d", again.Revision, after)
		}
		sameObj(t, "Get after re-Create", get(t, s, "/g/r/ns1/a", rv.MostRecent, 0), again)
	}},
	{"Preconditions", func(t *testing.T, s storage.Interface) {
		cur := create(t, s, obj("/g/r/ns1/a", "v1"))
		bad := []storage.Preconditions{
			{UID: "other"},
			{Revision: cur.Revision + 1},
			{UID: cur.UID, Revision: cur.Revision + 1},
			{UID: "other", Revision: cur.Revision},
		}
		for _, p := range bad {
			_, err := s.Delete(t.Context(), cur.Key, storage.DeleteOptions{Preconditions: p})
			wantErr(t, "Delete with failing preconditions", err, storage.ErrConflict)
			sameObj(t, "Get after refused Delete", get(t, s, cur.Key, rv.MostRecent, 0), cur)
		}
		got, err := s.Delete(t.Context(), cur.Key, storage.DeleteOptions{Preconditions: storage.Preconditions{UID: cur.UID, Revision: cur.Revision}})
		if err != nil {
			t.Fatalf("Delete with holding preconditions: %v", err)
		}
		atDelete := cur
		atDelete.Revision = revision(t, s)
		sameObj(t, "Delete result", got, atDelete)
	}},
	{"RevisionOfTheDelete", func(t *testing.T, s storage.Interface) {
		// kube answers a DELETE with the last state at the delete's
		// revision: the one a watch sees the DELETED event at.
		a := create(t, s, obj("/g/r/ns1/a", "v1"))
		create(t, s, obj("/g/r/ns1/b", "v1"))
		w := startWatch(t, s, "/g/r/ns1/a", storage.WatchOptions{Revision: a.Revision})
		got := del(t, s, "/g/r/ns1/a")
		if got.Revision <= a.Revision || string(got.Value) != "v1" {
			t.Fatalf("Delete result %s; want value v1 at a revision after %d", show(got), a.Revision)
		}
		w.expect(watch.Deleted, "/g/r/ns1/a", "v1", got.Revision)
		if r := revision(t, s); r != got.Revision {
			t.Fatalf("Revision() = %d after Delete; want the delete's %d", r, got.Revision)
		}
	}},
	{"Validate", func(t *testing.T, s storage.Interface) {
		cur := create(t, s, obj("/g/r/ns1/a", "v1"))
		refuse := errors.New("has finalizers")
		var seen storage.Object
		_, err := s.Delete(t.Context(), cur.Key, storage.DeleteOptions{Validate: func(o storage.Object) error {
			seen = o
			return refuse
		}})
		if err != refuse {
			t.Fatalf("Delete refused by Validate: got %v; want the hook's error unchanged", err)
		}
		sameObj(t, "Validate's argument", seen, cur)
		sameObj(t, "Get after refused Delete", get(t, s, cur.Key, rv.MostRecent, 0), cur)
		if r := revision(t, s); r != cur.Revision {
			t.Fatalf("Revision() = %d after a refused Delete; want %d", r, cur.Revision)
		}
		if _, err := s.Delete(t.Context(), cur.Key, storage.DeleteOptions{Validate: func(storage.Object) error { return nil }}); err != nil {
			t.Fatalf("Delete accepted by Validate: %v", err)
		}
	}},
}

var updateTests = []test{
	{"Update", func(t *testing.T, s storage.Interface) {
		cur := create(t, s, obj("/g/r/ns1/a", "v1", "app=web"))
		var seen storage.Object
		got, err := s.GuaranteedUpdate(t.Context(), cur.Key, storage.UpdateOptions{}, func(o storage.Object) (storage.Object, error) {
			seen = o
			n := obj(o.Key, "v2", "app=db")
			n.UID = o.UID
			n.Key, n.Revision = "/ignored/key", 12345
			return n, nil
		})
		if err != nil {
			t.Fatalf("GuaranteedUpdate: %v", err)
		}
		sameObj(t, "UpdateFunc's argument", seen, cur)
		want := obj(cur.Key, "v2", "app=db")
		want.Revision = got.Revision
		if got.Revision <= cur.Revision {
			t.Fatalf("update revision %d; want more than %d", got.Revision, cur.Revision)
		}
		sameObj(t, "GuaranteedUpdate result", got, want)
		sameObj(t, "Get after update", get(t, s, cur.Key, rv.MostRecent, 0), want)
		if r := revision(t, s); r != got.Revision {
			t.Fatalf("Revision() = %d; want %d", r, got.Revision)
		}
	}},
	{"NotFound", func(t *testing.T, s storage.Interface) {
		called := false
		_, err := s.GuaranteedUpdate(t.Context(), "/g/r/ns1/a", storage.UpdateOptions{}, func(o storage.Object) (storage.Object, error) {
			called = true
			return o, nil
		})
		wantErr(t, "GuaranteedUpdate of a missing key", err, storage.ErrNotFound)
		if called {
			t.Errorf("UpdateFunc called for a missing key; want it not called")
		}
		if _, err := s.Get(t.Context(), "/g/r/ns1/a", storage.GetOptions{}); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Get after GuaranteedUpdate of a missing key: %v; want ErrNotFound", err)
		}
	}},
	{"Preconditions", func(t *testing.T, s storage.Interface) {
		cur := create(t, s, obj("/g/r/ns1/a", "v1"))
		set := func(storage.Object) (storage.Object, error) { return obj(cur.Key, "v2"), nil }
		for _, p := range []storage.Preconditions{{UID: "other"}, {Revision: cur.Revision + 1}, {UID: cur.UID, Revision: cur.Revision + 1}} {
			_, err := s.GuaranteedUpdate(t.Context(), cur.Key, storage.UpdateOptions{Preconditions: p}, set)
			wantErr(t, "GuaranteedUpdate with failing preconditions", err, storage.ErrConflict)
			sameObj(t, "Get after refused update", get(t, s, cur.Key, rv.MostRecent, 0), cur)
		}
		got, err := s.GuaranteedUpdate(t.Context(), cur.Key, storage.UpdateOptions{Preconditions: storage.Preconditions{UID: cur.UID, Revision: cur.Revision}}, set)
		if err != nil || string(got.Value) != "v2" {
			t.Fatalf("GuaranteedUpdate with holding preconditions: %s, %v; want v2", show(got), err)
		}
	}},
	{"FuncError", func(t *testing.T, s storage.Interface) {
		cur := create(t, s, obj("/g/r/ns1/a", "v1"))
		stop := errors.New("invalid object")
		_, err := s.GuaranteedUpdate(t.Context(), cur.Key, storage.UpdateOptions{}, func(storage.Object) (storage.Object, error) {
			return obj(cur.Key, "v2"), stop
		})
		if !errors.Is(err, stop) {
			t.Fatalf("GuaranteedUpdate with a failing UpdateFunc: %v; want its error", err)
		}
		sameObj(t, "Get after aborted update", get(t, s, cur.Key, rv.MostRecent, 0), cur)
		if r := revision(t, s); r != cur.Revision {
			t.Fatalf("Revision() = %d after an aborted update; want %d", r, cur.Revision)
		}
	}},
	{"NoLostUpdates", func(t *testing.T, s storage.Interface) {
		const writers, each = 8, 50
		start := create(t, s, obj("/g/r/ns1/n", "0"))
		var wg sync.WaitGroup
		for range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					_, err := s.GuaranteedUpdate(t.Context(), "/g/r/ns1/n", storage.UpdateOptions{}, func(cur storage.Object) (storage.Object, error) {
						n, err := strconv.Atoi(string(cur.Value))
						if err != nil {
							return cur, err
						}
						cur.Value = []byte(strconv.Itoa(n + 1))
						return cur, nil
					})
					if err != nil {
						t.Errorf("GuaranteedUpdate: %v", err)
						return
					}
				}
			}()
		}
		within(t, "8 writers racing on one key", wg.Wait)
		got := get(t, s, "/g/r/ns1/n", rv.MostRecent, 0)
		if string(got.Value) != strconv.Itoa(writers*each) {
			t.Fatalf("counter = %s after %d increments; want %d (lost updates)", got.Value, writers*each, writers*each)
		}
		if d := got.Revision - start.Revision; d != writers*each {
			t.Errorf("%d revisions for %d updates; want one per update", d, writers*each)
		}
	}},
	{"RetrySeesNewerState", func(t *testing.T, s storage.Interface) {
		// The first call of fn lets another writer in; if the store then
		// retries, the retry must see that writer's state. Either way both
		// updates must survive.
		create(t, s, obj("/g/r/ns1/a", "start"))
		var calls []string
		interfered := make(chan struct{})
		got, err := s.GuaranteedUpdate(t.Context(), "/g/r/ns1/a", storage.UpdateOptions{}, func(cur storage.Object) (storage.Object, error) {
			calls = append(calls, string(cur.Value))
			if len(calls) == 1 {
				go func() {
					defer close(interfered)
					_, err := s.GuaranteedUpdate(context.Background(), "/g/r/ns1/a", storage.UpdateOptions{}, func(c storage.Object) (storage.Object, error) {
						c.Value = append([]byte(nil), c.Value...)
						c.Value = append(c.Value, "+b"...)
						return c, nil
					})
					if err != nil {
						t.Errorf("interfering GuaranteedUpdate: %v", err)
					}
				}()
				select { // a store that serialises fn under a lock lets it in later
				case <-interfered:
				case <-time.After(200 * time.Millisecond):
				}
			}
			cur.Value = append([]byte(nil), cur.Value...)
			cur.Value = append(cur.Value, "+a"...)
			return cur, nil
		})
		if err != nil {
			t.Fatalf("GuaranteedUpdate: %v", err)
		}
		within(t, "the interfering update", func() { <-interfered })
		final := string(get(t, s, "/g/r/ns1/a", rv.MostRecent, 0).Value)
		switch {
		case len(calls) == 1 && final == "start+a+b" && string(got.Value) == "start+a":
		case len(calls) == 2 && calls[1] == "start+b" && final == "start+b+a" && string(got.Value) == final:
		default:
			t.Fatalf("fn saw %q, returned %q, final %q; want a retry to see start+b and both updates kept", calls, got.Value, final)
		}
	}},
}
