package cache

import (
	"context"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/keytree"
	"github.com/kapi-dev/kapi/watch"
)

// Reads. Which revision a read needs, and who serves it (as
// k8s.io/apiserver's cacher and its delegator do):
//
//	Match         needs                         served by the cache at     else
//	MostRecent    backend.Revision() (1 call)   its revision, once ≥ it    backend, after Wait
//	Any           nothing                       its revision               backend while re-listing
//	NotOlderThan  N                             its revision, once ≥ N     ErrTooLarge if N > backend's, else backend
//	Exact         N                             N, from history            backend, if N is older than the history
//	Continue      the token's revision r        r, from a snapshot         backend, if r is older than the history
//
// A list with a limit that does not fit in one page is served as the
// others, and its continue token, in the backend's format
// (Options.Tokens), names the snapshot its continuations read: they are
// the cache's while r is in its history, the backend's after (see
// page.go).

// need waits for the cache to be able to serve a read with opts' match
// and revision. It returns false when the backend must serve it
// instead, or an error for a revision the backend has not reached.
func (c *Cache) need(ctx context.Context, key string, m rv.Match, rev uint64) (bool, error) {
	switch m {
	case rv.MostRecent:
		cur, err := c.backend.Revision(ctx)
		if err != nil {
			return false, err
		}
		return c.fresh(ctx, cur), nil
	case rv.NotOlderThan, rv.Exact:
		if c.fresh(ctx, rev) {
			return true, nil
		}
		cur, err := c.backend.Revision(ctx)
		if err != nil || rev > cur {
			return false, tooLarge(key, rev, cur)
		}
		return false, nil // the cache lags: the backend has it
	}
	_, _, ready := c.revision()
	return ready, nil
}

// Get reads key from the cache at the revision opts choose.
func (c *Cache) Get(ctx context.Context, key string, opts storage.GetOptions) (storage.Object, error) {
	if !c.holds(key) {
		return c.backend.Get(ctx, key, opts)
	}
	ok, err := c.need(ctx, key, opts.Match, opts.Revision)
	if err != nil {
		return storage.Object{}, err
	}
	if ok {
		if o, ok, err := c.get(key, opts); ok {
			return o, err
		}
	}
	return c.backend.Get(ctx, key, opts)
}

// get reads key from the tree, or from history for an older Exact read;
// false if the history does not reach back that far.
func (c *Cache) get(key string, opts storage.GetOptions) (storage.Object, bool, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	cur := c.log.Revision()
	var state any
	if opts.Match == rv.Exact && opts.Revision != 0 && opts.Revision < cur {
		if opts.Revision < c.log.Oldest() {
			return storage.Object{}, false, nil
		}
		cur = opts.Revision
		if ch, ok := c.firstChange(key, opts.Revision); ok {
			state = ch.Prev
		} else if it, ok := c.live.Tree.Get(&keytree.Item{Key: key}); ok {
			state = it.Obj
		}
	} else if it, ok := c.live.Tree.Get(&keytree.Item{Key: key}); ok {
		state = it.Obj
	}
	if state == nil {
		return storage.Object{}, true, &storage.Error{Err: storage.ErrNotFound, Key: key, Revision: cur}
	}
	return state.(storage.Object), true, nil
}

// firstChange returns the first change to key after rev. Callers hold
// mu shared, so the log does not grow meanwhile.
func (c *Cache) firstChange(key string, rev uint64) (watch.Change, bool) {
	changes, err := c.log.Since(rev)
	if err != nil {
		return watch.Change{}, false
	}
	for ch := range changes {
		if k, ok := keyOf(ch); ok && k == key {
			return ch, true
		}
	}
	return watch.Change{}, false
}

// keyOf returns the key a change is about; false for progress markers.
func keyOf(ch watch.Change) (string, bool) {
	switch {
	case ch.Object != nil:
		return ch.Object.(storage.Object).Key, true
	case ch.Prev != nil:
		return ch.Prev.(storage.Object).Key, true
	}
	return "", false
}
