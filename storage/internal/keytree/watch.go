package keytree

import (
	"iter"
	"strings"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// WatcherOptions returns the options of a watch of key in l: the filter
// Match(key, opts.Recursive, opts.Predicate), opts' bookmarks, and with
// opts.Initial the initial state (Initial(l, key, opts.Recursive)).
// Callers hold the lock that guards l, as for Initial.
func WatcherOptions(l *Live, key string, opts storage.WatchOptions) watch.WatcherOptions {
	wo := watch.WatcherOptions{
		Match:            Match(key, opts.Recursive, opts.Predicate),
		InitialEventsEnd: opts.InitialEnd,
		Bookmarks:        opts.Bookmarks,
	}
	if opts.Initial {
		wo.Start = Initial(l, key, opts.Recursive)
	}
	return wo
}

// Initial returns the state under key in l as Added changes, the start
// of a watch with initial events. Callers hold the lock that guards l,
// taken with the log position the watch starts at, so the state and the
// position agree. Without recursive, key's item is read now; with it, a
// clone of the tree is taken now and its items under key are read as
// the changes are drawn:
//
//	l at r7: {/a/1, /a/2, /b/1}
//	Initial(l, "/a/1", false): Added /a/1
//	Initial(l, "/a/", true):   Added /a/1, Added /a/2 (from the clone @7)
func Initial(l *Live, key string, recursive bool) iter.Seq[watch.Change] {
	if !recursive {
		it, ok := l.Tree.Get(&Item{Key: key})
		return func(yield func(watch.Change) bool) {
			if ok {
				yield(added(it))
			}
		}
	}
	c := l.Clone()
	return func(yield func(watch.Change) bool) {
		c.AscendGreaterOrEqual(&Item{Key: key}, func(it *Item) bool {
			return strings.HasPrefix(it.Key, key) && yield(added(it))
		})
	}
}

// added returns it as an Added change at its revision.
func added(it *Item) watch.Change {
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
