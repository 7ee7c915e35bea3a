package storagetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

var watchTests = []test{
	{"Key", func(t *testing.T, s storage.Interface) {
		w := startWatch(t, s, "/g/r/ns1/a", storage.WatchOptions{})
		create(t, s, obj("/g/r/ns1/ab", "not this key"))
		create(t, s, obj("/g/r/ns1/b", "nor this"))
		a := create(t, s, obj("/g/r/ns1/a", "v1"))
		w.expect(watch.Added, "/g/r/ns1/a", "v1", a.Revision)
		put(t, s, "/g/r/ns1/ab", "x")
		a2 := put(t, s, "/g/r/ns1/a", "v2")
		w.expect(watch.Modified, "/g/r/ns1/a", "v2", a2.Revision)
		del(t, s, "/g/r/ns1/ab")
		gone := del(t, s, "/g/r/ns1/a")
		o := w.expect(watch.Deleted, "/g/r/ns1/a", "v2", gone.Revision)
		sameObj(t, "DELETED object", o, a2) // the last state; Delete answers it at the delete's revision
	}},
	{"Recursive", func(t *testing.T, s storage.Interface) {
		w := startWatch(t, s, "/g/r/ns1/", storage.WatchOptions{Recursive: true})
		create(t, s, obj("/g/r/ns10/a", "other namespace"))
		create(t, s, obj("/g/r2/ns1/a", "other resource"))
		a := create(t, s, obj("/g/r/ns1/a", "a"))
		w.expect(watch.Added, "/g/r/ns1/a", "a", a.Revision)
		create(t, s, obj("/g/r/ns2/a", "other namespace"))
		b := create(t, s, obj("/g/r/ns1/b", "b"))
		w.expect(watch.Added, "/g/r/ns1/b", "b", b.Revision)
		a2 := put(t, s, "/g/r/ns1/a", "a2")
		w.expect(watch.Modified, "/g/r/ns1/a", "a2", a2.Revision)
		del(t, s, "/g/r/ns1/b")
		w.expect(watch.Deleted, "/g/r/ns1/b", "b", revision(t, s))
	}},
	{"FromRevision", func(t *testing.T, s storage.Interface) {
		create(t, s, obj("/g/r/ns/a", "a1"))
		from := revision(t, s)
		b := create(t, s, obj("/g/r/ns/b", "b1"))
		a2 := put(t, s, "/g/r/ns/a", "a2")
		del(t, s, "/g/r/ns/b")
		delRev := revision(t, s)
		create(t, s, obj("/g/x/ns/z", "elsewhere"))
		w := startWatch(t, s, "/g/r/", storage.WatchOptions{Recursive: true, Revision: from})
		k := startWatch(t, s, "/g/r/ns/a", storage.WatchOptions{Revision: from})
		w.expect(watch.Added, "/g/r/ns/b", "b1", b.Revision)
		w.expect(watch.Modified, "/g/r/ns/a", "a2", a2.Revision)
		w.expect(watch.Deleted, "/g/r/ns/b", "b1", delRev)
		k.expect(watch.Modified, "/g/r/ns/a", "a2", a2.Revision)
		c := create(t, s, obj("/g/r/ns/c", "c1")) // live after replay
		w.expect(watch.Added, "/g/r/ns/c", "c1", c.Revision)
		a3 := put(t, s, "/g/r/ns/a", "a3")
		w.expect(watch.Modified, "/g/r/ns/a", "a3", a3.Revision)
		k.expect(watch.Modified, "/g/r/ns/a", "a3", a3.Revision)
	}},
	{"FromCurrent", func(t *testing.T, s storage.Interface) {
		create(t, s, obj("/g/r/ns/a", "a1"))
		for _, current := range []bool{false, true} {
			t.Run(fmt.Sprint("explicit revision=", current), func(t *testing.T) {
				var from uint64
				if current {
					from = revision(t, s)
				}
				w := startWatch(t, s, "/g/r/ns/", storage.WatchOptions{Recursive: true, Revision: from})
				o := create(t, s, obj(fmt.Sprintf("/g/r/ns/from-%v", current), "new"))
				w.expect(watch.Added, o.Key, "new", o.Revision)
			})
		}
	}},
	{"Initial", func(t *testing.T, s storage.Interface) {
		for _, end := range []bool{false, true} {
			t.Run(fmt.Sprint("InitialEnd=", end), func(t *testing.T) {
				p := fmt.Sprintf("/g/i-%v/", end)
				create(t, s, obj(p+"ns/b", "b1", "app=web"))
				create(t, s, obj(p+"ns/a", "a1", "app=web"))
				create(t, s, obj(p+"ns/c", "c1", "app=db"))
				create(t, s, obj(fmt.Sprintf("/g/i-%v-other/ns/a", end), "other resource", "app=web"))
				start := revision(t, s)
				w := startWatch(t, s, p, storage.WatchOptions{Recursive: true, Initial: true, InitialEnd: end, Predicate: mustSelector(t, "app=web", "")})
				if got, want := w.initial(2, end, start), p+"ns/a=a1 "+p+"ns/b=b1"; got != want {
					t.Fatalf("initial events %s; want %s", got, want)
				}
				o := put(t, s, p+"ns/a", "a2")
				w.expect(watch.Modified, p+"ns/a", "a2", o.Revision)
			})
		}
		t.Run("Key", func(t *testing.T) {
			create(t, s, obj("/g/k/ns/c", "c1"))
			create(t, s, obj("/g/k/ns/cc", "c1"))
			w := startWatch(t, s, "/g/k/ns/c", storage.WatchOptions{Initial: true, InitialEnd: true})
			if got := w.initial(1, true, revision(t, s)); got != "/g/k/ns/c=c1" {
				t.Fatalf("initial events %s; want /g/k/ns/c=c1", got)
			}
		})
		t.Run("Empty", func(t *testing.T) {
			w := startWatch(t, s, "/g/none/", storage.WatchOptions{Recursive: true, Initial: true, InitialEnd: true})
			w.initial(0, true, revision(t, s))
			o := create(t, s, obj("/g/none/ns/x", "x"))
			w.expect(watch.Added, o.Key, "x", o.Revision)
		})
		t.Run("AtRevision", func(t *testing.T) {
			// The state served is at the revision asked for or newer (an
			// etcd watch lists at it, a watch cache serves what it has),
			// and the stream goes on from the bookmark's revision.
			create(t, s, obj("/g/at/ns/b", "b1"))
			a := create(t, s, obj("/g/at/ns/a", "a1"))
			c := create(t, s, obj("/g/at/ns/c", "c1"))
			a2 := put(t, s, "/g/at/ns/a", "a2")
			cur := revision(t, s)
			w := startWatch(t, s, "/g/at/", storage.WatchOptions{Recursive: true, Revision: a.Revision, Initial: true, InitialEnd: true})
			var got []string
			var at uint64
			for at == 0 {
				ev := w.next("initial events, then the initial-events-end bookmark")
				o, _ := ev.Object.(storage.Object)
				switch {
				case ev.Type == watch.Bookmark && ev.InitialEventsEnd:
					at = ev.Revision
				case ev.Type == watch.Added && ev.Revision == o.Revision:
					got = append(got, o.Key+"="+string(o.Value))
				default:
					t.Fatalf("got %s %s at %d; want initial ADDED events at their objects' revisions, then the bookmark", ev.Type, o.Key, ev.Revision)
				}
			}
			if at < a.Revision || at > cur {
				t.Fatalf("initial-events-end bookmark at %d; want between %d (asked for) and %d (current)", at, a.Revision, cur)
			}
			slices.Sort(got)
			if want := keys(list(t, s, "/g/at/", storage.ListOptions{Match: rv.Exact, Revision: at}).Items); !slices.Equal(got, want) {
				t.Fatalf("initial events %q with the bookmark at %d; want the state then, %q", got, at, want)
			}
			w.last = at
			if c.Revision > at {
				w.expect(watch.Added, "/g/at/ns/c", "c1", c.Revision)
			}
			if a2.Revision > at {
				w.expect(watch.Modified, "/g/at/ns/a", "a2", a2.Revision)
			}
			d := create(t, s, obj("/g/at/ns/d", "d1"))
			w.expect(watch.Added, "/g/at/ns/d", "d1", d.Revision)
		})
	}},
	{"Transitions", func(t *testing.T, s storage.Interface) {
		w := startWatch(t, s, "/g/r/", storage.WatchOptions{Recursive: true, Predicate: mustSelector(t, "app=web", "metadata.namespace=ns1")})
		create(t, s, obj("/g/r/ns1/x", "x1", "app=db"))
		create(t, s, obj("/g/r/ns2/x", "y1", "app=web"))
		x2 := put(t, s, "/g/r/ns1/x", "x2", "app=web") // starts matching
		w.expect(watch.Added, "/g/r/ns1/x", "x2", x2.Revision)
		x3 := put(t, s, "/g/r/ns1/x", "x3", "app=web")
		w.expect(watch.Modified, "/g/r/ns1/x", "x3", x3.Revision)
		x4 := put(t, s, "/g/r/ns1/x", "x4", "app=db") // stops matching
		o := w.expect(watch.Deleted, "/g/r/ns1/x", "x3", x4.Revision)
		sameObj(t, "DELETED object on leaving the selector", o, x3)
		put(t, s, "/g/r/ns1/x", "x5", "app=db")
		del(t, s, "/g/r/ns1/x")
		del(t, s, "/g/r/ns2/x")
		z := create(t, s, obj("/g/r/ns1/z", "z", "app=web"))
		w.expect(watch.Added, "/g/r/ns1/z", "z", z.Revision)
	}},
	{"Expired", func(t *testing.T, s storage.Interface) {
		create(t, s, obj("/g/r/ns/a", "a1"))
		old := revision(t, s)
		put(t, s, "/g/r/ns/a", "a2")
		at := revision(t, s)
		a3 := put(t, s, "/g/r/ns/a", "a3")
		if err := s.Compact(t.Context(), at); err != nil {
			t.Fatalf("Compact: %v", err)
		}
		for _, key := range []string{"/g/r/", "/g/r/ns/a"} {
			_, err := s.Watch(t.Context(), key, storage.WatchOptions{Recursive: key == "/g/r/", Revision: old})
			wantErr(t, "Watch "+key+" from a compacted revision", err, storage.ErrExpired)
		}
		w := startWatch(t, s, "/g/r/", storage.WatchOptions{Recursive: true, Revision: at})
		w.expect(watch.Modified, "/g/r/ns/a", "a3", a3.Revision)
	}},
	{"Stop", func(t *testing.T, s storage.Interface) {
		w := startWatch(t, s, "/g/r/", storage.WatchOptions{Recursive: true})
		done := make(chan struct{})
		go func() { // writes racing with Stop
			defer close(done)
			for i := range 200 {
				if _, err := s.Create(context.Background(), obj(fmt.Sprintf("/g/r/ns/o%03d", i), "v")); err != nil {
					t.Errorf("Create: %v", err)
					return
				}
			}
		}()
		w.next("an event before Stop")
		var stops sync.WaitGroup
		for range 3 {
			stops.Add(1)
			go func() {
				defer stops.Done()
				w.w.Stop()
			}()
		}
		stops.Wait()
		w.w.Stop()
		within(t, "writes racing with Stop", func() { <-done })
		w.closed("Stop")
	}},
	{"ContextCancel", func(t *testing.T, s storage.Interface) {
		ctx, cancel := context.WithCancel(t.Context())
		wi, err := s.Watch(ctx, "/g/r/", storage.WatchOptions{Recursive: true})
		if err != nil {
			t.Fatalf("Watch: %v", err)
		}
		w := newWatcher(t, wi)
		a := create(t, s, obj("/g/r/ns/a", "a"))
		w.expect(watch.Added, "/g/r/ns/a", "a", a.Revision)
		cancel()
		w.closed("the context was cancelled")
	}},
	{"SlowWatcher", func(t *testing.T, s storage.Interface) {
		const n, batch = 3000, 10
		slow, err := s.Watch(t.Context(), "/g/r/", storage.WatchOptions{Recursive: true})
		if err != nil {
			t.Fatalf("Watch: %v", err)
		}
		defer slow.Stop()
		fast := startWatch(t, s, "/g/r/", storage.WatchOptions{Recursive: true})
		revs := make([]uint64, n)
		read := make(chan int, n/batch)
		errc := make(chan error, 1)
		go func() { // writes while slow is never read
			defer close(errc)
			for i := range n {
				if i%batch == 0 && i > 0 {
					<-read // keep within a few events of the reading watcher
				}
				o, err := s.Create(context.Background(), obj(fmt.Sprintf("/g/r/ns/o%04d", i), "v"))
				if err != nil {
					errc <- err
					return
				}
				revs[i] = o.Revision
			}
		}()
		for i := range n { // the reading watcher misses nothing
			ev := fast.next(fmt.Sprintf("event %d of %d (is a write blocked by the watcher that does not read?)", i+1, n))
			if o, _ := ev.Object.(storage.Object); ev.Type != watch.Added || o.Key != fmt.Sprintf("/g/r/ns/o%04d", i) {
				t.Fatalf("reading watcher event %d: %s %s; want ADDED /g/r/ns/o%04d", i, ev.Type, o.Key, i)
			}
			if (i+1)%batch == 0 {
				read <- i
			}
		}
		within(t, fmt.Sprintf("%d writes with a watcher that never reads", n), func() {
			if err := <-errc; err != nil {
				t.Errorf("Create: %v", err)
			}
		})
		// The slow watcher delivers an unbroken prefix of the events, then
		// either everything or the end of the stream.
		for i := 0; i < n; {
			ev, ok := recv(t, slow)
			switch {
			case !ok:
				return
			case ev.Type == watch.Error:
				drained(t, slow.ResultChan(), "an ERROR event")
				return
			case ev.Type == watch.Bookmark:
				continue
			}
			if o, _ := ev.Object.(storage.Object); ev.Type != watch.Added || o.Key != fmt.Sprintf("/g/r/ns/o%04d", i) || ev.Revision != revs[i] {
				t.Fatalf("slow watcher event %d: %s %s at %d; want ADDED /g/r/ns/o%04d at %d or the end of the watch", i, ev.Type, o.Key, ev.Revision, i, revs[i])
			}
			i++
		}
	}},
	{"ManyWatchers", func(t *testing.T, s storage.Interface) {
		var ws []*watcher
		for i := range 20 {
			key := "/g/r/"
			if i%2 == 1 {
				key = "/g/r/ns/a"
			}
			ws = append(ws, startWatch(t, s, key, storage.WatchOptions{Recursive: i%2 == 0}))
		}
		a := create(t, s, obj("/g/r/ns/a", "a"))
		for _, w := range ws {
			w.expect(watch.Added, "/g/r/ns/a", "a", a.Revision)
		}
	}},
}

// initial reads n ADDED events (each object at its own revision) and,
// when end is set, the initial-events-end bookmark at revision at. It
// returns the objects as sorted "key=value" pairs joined by spaces.
func (w *watcher) initial(n int, end bool, at uint64) string {
	w.t.Helper()
	var got []string
	for i := range n {
		ev := w.next(fmt.Sprintf("initial ADDED event %d of %d", i+1, n))
		o, ok := ev.Object.(storage.Object)
		if ev.Type != watch.Added || !ok {
			w.t.Fatalf("initial event %d: %s %T; want ADDED with a storage.Object", i, ev.Type, ev.Object)
		}
		if ev.Revision != o.Revision || o.Revision > at {
			w.t.Fatalf("initial ADDED %s: event revision %d, object revision %d; want both the object's, at most %d", o.Key, ev.Revision, o.Revision, at)
		}
		got = append(got, o.Key+"="+string(o.Value))
	}
	if end {
		ev := w.next("the initial-events-end bookmark")
		if ev.Type != watch.Bookmark || !ev.InitialEventsEnd || ev.Revision != at {
			w.t.Fatalf("got %s (InitialEventsEnd=%v) at %d after %d initial events; want BOOKMARK with InitialEventsEnd at %d", ev.Type, ev.InitialEventsEnd, ev.Revision, n, at)
		}
	}
	w.last = at
	slices.Sort(got)
	return strings.Join(got, " ")
}

// recv reads one event, failing if none comes in time.
func recv(t *testing.T, w watch.Interface) (watch.Event, bool) {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		return ev, ok
	case <-time.After(wait):
		t.Fatalf("watch neither delivered an event nor closed within %v", wait)
		return watch.Event{}, false
	}
}
