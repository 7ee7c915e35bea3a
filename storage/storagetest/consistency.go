package storagetest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// List/watch consistency under concurrent writers: a list at revision R
// (or the initial events up to their bookmark at R) followed by a watch
// from R must see every later change exactly once, in revision order, with
// no gap at R.
var consistencyTests = []test{
	{"ListThenWatch", func(t *testing.T, s storage.Interface) { consistency(t, s, false) }},
	{"InitialEvents", func(t *testing.T, s storage.Interface) { consistency(t, s, true) }},
}

// op is one write a writer made; rev is 0 for deletes, whose revision a
// writer does not learn.
type op struct {
	typ   watch.EventType
	value string
	rev   uint64
}

const (
	writers   = 4
	keysEach  = 5
	opsEach   = 60
	watchFrom = writers * opsEach / 3 // start reading once this many writes are done
)

func consistency(t *testing.T, s storage.Interface, initial bool) {
	logs := make(map[string][]op) // per key, in write order (one writer per key)
	var mu sync.Mutex
	var done atomic.Int64
	started := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := map[string][]op{}
			defer func() {
				mu.Lock()
				maps.Copy(logs, mine)
				mu.Unlock()
			}()
			ctx := context.Background()
			for i := range opsEach {
				if done.Add(1) == watchFrom {
					once.Do(func() { close(started) })
				}
				key := fmt.Sprintf("/g/r/ns/w%d-k%d", w, i%keysEach)
				log := mine[key]
				val := fmt.Sprintf("w%d-%d", w, i)
				var o storage.Object
				var err error
				switch {
				case len(log) == 0 || log[len(log)-1].typ == watch.Deleted:
					o, err = s.Create(ctx, obj(key, val))
					log = append(log, op{watch.Added, val, o.Revision})
				case i%7 == 3:
					o, err = s.Delete(ctx, key, storage.DeleteOptions{})
					log = append(log, op{watch.Deleted, string(o.Value), 0})
				default:
					o, err = s.GuaranteedUpdate(ctx, key, storage.UpdateOptions{}, func(cur storage.Object) (storage.Object, error) {
						cur.Value = []byte(val)
						return cur, nil
					})
					log = append(log, op{watch.Modified, val, o.Revision})
				}
				if err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				mine[key] = log
				if i%3 == 0 { // writes outside the watched prefix
					noise := fmt.Sprintf("/g/o/ns/w%d", w)
					if _, err := s.Create(ctx, obj(noise, val)); err != nil {
						_, _ = s.Delete(ctx, noise, storage.DeleteOptions{})
					}
				}
			}
		}()
	}
	finished := make(chan struct{})
	go func() {
		wg.Wait()
		close(finished)
	}()
	defer within(t, "the writers", func() { <-finished })
	select {
	case <-started:
	case <-finished:
	}

	state := map[string]storage.Object{}
	var from uint64
	var w *watcher
	if initial {
		w = startWatch(t, s, "/g/r/", storage.WatchOptions{Recursive: true, Initial: true, InitialEnd: true})
		for {
			ev := w.next("initial events, then the initial-events-end bookmark")
			if ev.Type == watch.Bookmark {
				from = ev.Revision
				break
			}
			o, _ := ev.Object.(storage.Object)
			if ev.Type != watch.Added || state[o.Key].Key != "" {
				t.Fatalf("initial event %s %s; want one ADDED per object", ev.Type, o.Key)
			}
			state[o.Key] = o
		}
		w.last = from
	} else {
		r := list(t, s, "/g/r/", storage.ListOptions{})
		from = r.Revision
		for _, o := range r.Items {
			state[o.Key] = o
		}
		w = startWatch(t, s, "/g/r/", storage.WatchOptions{Recursive: true, Revision: from})
	}
	within(t, "the writers", func() { <-finished })
	if t.Failed() {
		return
	}

	// What each key's stream must be: its writes after from.
	want := map[string][]op{}
	total := 0
	for key, log := range logs {
		next := 0
		if o, ok := state[key]; ok {
			next = slices.IndexFunc(log, func(x op) bool { return x.rev == o.Revision })
			if next < 0 || log[next].value != string(o.Value) {
				t.Fatalf("state at %d has %s=%q at %d; no write made it", from, key, o.Value, o.Revision)
			}
			next++
		} else if j := lastBefore(log, from); j >= 0 {
			if j+1 >= len(log) || log[j+1].typ != watch.Deleted {
				t.Fatalf("state at %d lacks %s, written at %d and not deleted before", from, key, log[j].rev)
			}
			next = j + 2
		}
		want[key] = log[next:]
		total += len(log) - next
	}

	got := map[string][]op{}
	for i := range total {
		ev := w.next(fmt.Sprintf("event %d of %d after revision %d", i+1, total, from))
		o, ok := ev.Object.(storage.Object)
		if !ok || ev.Revision <= w.last {
			t.Fatalf("event %s %T at %d after one at %d; want storage.Object events in increasing revision order", ev.Type, ev.Object, ev.Revision, w.last)
		}
		w.last = ev.Revision
		x := op{ev.Type, string(o.Value), ev.Revision}
		if ev.Type == watch.Deleted {
			x.rev = 0
			delete(state, o.Key)
		} else {
			state[o.Key] = o
		}
		got[o.Key] = append(got[o.Key], x)
	}
	for key, ops := range want {
		if !slices.Equal(got[key], ops) {
			t.Errorf("%s after %d: got events %v; want %v", key, from, got[key], ops)
		}
	}
	sentinel := create(t, s, obj("/g/r/ns/zz", "sentinel"))
	w.expect(watch.Added, "/g/r/ns/zz", "sentinel", sentinel.Revision) // and nothing before it
	state[sentinel.Key] = sentinel

	var replayed, listed []string
	for _, o := range state {
		replayed = append(replayed, o.Key+"="+string(o.Value))
	}
	slices.Sort(replayed)
	listed = keys(list(t, s, "/g/r/", storage.ListOptions{}).Items)
	if !slices.Equal(replayed, listed) {
		t.Fatalf("state replayed from the watch:\n%s\nwant the listed state:\n%s", strings.Join(replayed, " "), strings.Join(listed, " "))
	}
}

// lastBefore is the index of the last write at or before rev whose
// revision is known, or -1.
func lastBefore(log []op, rev uint64) int {
	j := -1
	for i, x := range log {
		if x.rev != 0 && x.rev <= rev {
			j = i
		}
	}
	return j
}
