package cache

import (
	"context"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
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
//
// A list with a limit is served by the cache when the whole answer
// fits in one page (no continue token is needed); otherwise the list,
// and every continuation of it, is the backend's, so continue tokens are
// always the backend's own.

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
		} else if it, ok := c.tree.Get(&item{key: key}); ok {
			state = it.obj
		}
	} else if it, ok := c.tree.Get(&item{key: key}); ok {
		state = it.obj
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

// List reads the keys under prefix from the cache when it can (see the
// table above), else from the backend.
func (c *Cache) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	if !c.holds(prefix) || opts.Continue != "" {
		return c.backend.List(ctx, prefix, opts)
	}
	ok, err := c.need(ctx, prefix, opts.Match, opts.Revision)
	if err != nil {
		return storage.ListResult{}, err
	}
	if ok {
		if res, ok := c.list(prefix, opts); ok {
			return res, nil
		}
	}
	return c.backend.List(ctx, prefix, opts)
}

// list reads one whole answer from the tree, or from a snapshot rebuilt
// from history for an older Exact read; false when the history does not
// reach back that far or the answer does not fit in opts.Limit.
func (c *Cache) list(prefix string, opts storage.ListOptions) (storage.ListResult, bool) {
	c.mu.RLock()
	cur := c.log.Revision()
	if opts.Match == rv.Exact && opts.Revision != 0 && opts.Revision < cur {
		c.mu.RUnlock()
		t, ok := c.snapshot(opts.Revision)
		if !ok {
			return storage.ListResult{}, false
		}
		items, more := scan(t, prefix, opts.Limit, opts.Predicate, 0)
		return storage.ListResult{Items: items, Revision: opts.Revision}, !more
	}
	size := int64(0)
	if opts.Predicate.Empty() && (prefix == "" || strings.HasSuffix(prefix, "/")) {
		size = c.dirs[prefix]
	}
	items, more := scan(c.tree, prefix, opts.Limit, opts.Predicate, size)
	c.mu.RUnlock()
	return storage.ListResult{Items: items, Revision: cur}, !more
}

// snapshot rebuilds the tree at rev from the current one by undoing the
// changes after rev, newest first (as the memory store does):
//
//	log:      r5 Added a=1   r6 Modified a=2 (prev a=1)   r7 Deleted b (prev b=9)
//	current:  {a=2}
//	at r5:    undo r7 (put b=9), undo r6 (put a=1)        → {a=1, b=9}
//
// false if rev is older than the history.
func (c *Cache) snapshot(rev uint64) (*tree, bool) {
	c.mu.RLock()
	if rev < c.log.Oldest() {
		c.mu.RUnlock()
		return nil, false
	}
	changes, err := c.log.Since(rev)
	if err != nil {
		c.mu.RUnlock()
		return nil, false
	}
	undo := slices.Collect(changes)
	t := c.cloneTree()
	c.mu.RUnlock()
	for _, ch := range slices.Backward(undo) {
		k, ok := keyOf(ch)
		if !ok {
			continue
		}
		if ch.Prev == nil {
			t.Delete(&item{key: k})
		} else {
			t.ReplaceOrInsert(&item{key: k, obj: ch.Prev})
		}
	}
	return t, true
}

// cloneTree returns an O(1) copy-on-write clone of the tree. Callers
// hold mu.
func (c *Cache) cloneTree() *tree {
	c.clone.Lock()
	defer c.clone.Unlock()
	return c.tree.Clone()
}

// scan reads up to limit items matching p (all when limit is 0) from the
// keys under prefix; more reports that matching items were left out.
// size is a capacity hint.
func scan(t *tree, prefix string, limit int64, p storage.Predicate, size int64) (items []storage.Object, more bool) {
	all := p.Empty()
	if limit > 0 {
		size = min(size, limit)
	}
	items = make([]storage.Object, 0, max(size, 0))
	t.AscendGreaterOrEqual(&item{key: prefix}, func(it *item) bool {
		if !strings.HasPrefix(it.key, prefix) {
			return false
		}
		obj := it.object()
		if !all && !p.Matches(obj) {
			return true
		}
		if limit > 0 && int64(len(items)) == limit {
			more = true
			return false
		}
		items = append(items, obj)
		return true
	})
	return items, more
}
