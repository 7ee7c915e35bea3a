package keytree

import (
	"iter"
	"strings"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// WatcherOptions returns the options of a watch of key in the live tree
// t: the filter Match(key, opts.Recursive, opts.Predicate), opts'
// bookmarks, and with opts.Initial the initial state (Initial(t, clone,
// key, opts.Recursive)). Callers hold t's lock, as for Initial.
func WatcherOptions(t *Tree, clone func() *Tree, key string, opts storage.WatchOptions) watch.WatcherOptions {
	wo := watch.WatcherOptions{
		Match:            Match(key, opts.Recursive, opts.Predicate),
		InitialEventsEnd: opts.InitialEnd,
		Bookmarks:        opts.Bookmarks,
	}
	if opts.Initial {
		wo.Start = Initial(t, clone, key, opts.Recursive)
	}
	return wo
}

// Initial returns the state under key in the live tree t as Added
// changes, the start of a watch with initial events. Callers hold the
// lock that keeps t from changing, taken with the log position the watch
// starts at, so the state and the position agree. Without recursive,
// key's item is read now; with it, clone returns an O(1) copy of t that
// is read as the changes are drawn:
//
//	t at r7: {/a/1, /a/2, /b/1}
//	Initial(t, clone, "/a/1", false): Added /a/1
//	Initial(t, clone, "/a/", true):   Added /a/1, Added /a/2 (from the clone @7)
func Initial(t *Tree, clone func() *Tree, key string, recursive bool) iter.Seq[watch.Change] {
	if !recursive {
		it, ok := t.Get(&Item{Key: key})
		return func(yield func(watch.Change) bool) {
			if ok {
				yield(Added(it))
			}
		}
	}
	c := clone()
	return func(yield func(watch.Change) bool) {
		c.AscendGreaterOrEqual(&Item{Key: key}, func(it *Item) bool {
			return strings.HasPrefix(it.Key, key) && yield(Added(it))
		})
	}
}

// Added returns it as an Added change at its revision.
func Added(it *Item) watch.Change {
	return watch.Change{Type: watch.Added, Revision: it.Object().Revision, Object: it.Obj}
}

// Match composes the key match (key itself, or with recursive every key
// under it) and the predicate p into a watch filter of storage.Object
// states.
func Match(key string, recursive bool, p storage.Predicate) func(any) bool {
	all := p.Empty()
	return func(o any) bool {
		obj := o.(storage.Object)
		if recursive {
			if !strings.HasPrefix(obj.Key, key) {
				return false
			}
		} else if obj.Key != key {
			return false
		}
		return all || p.Matches(obj)
	}
}
