package cache

import (
	"context"
	"strings"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/keytree"
)

// Lists. A whole list, and the first page of a paginated one, is read
// from the tree at the cache's revision (or from a snapshot rebuilt
// from history for an older Exact list). A page after which more items
// follow clones the tree (see snapshot.go) and gets a continue token in
// the backend's own format (Options.Tokens, the backend's keys), naming
// the snapshot's revision, the next key and the items returned so far;
// every continuation is served from that snapshot. Tokens stay the
// backend's: whatever the cache cannot serve goes to the backend with
// the same token, which answers as it would have.
//
//	token                                  served by
//	Revision r, oldest ≤ r ≤ cache's rev   the cache, from the snapshot at r (cached or rebuilt)
//	r newer than the cache, ≤ backend's    the cache, once it reaches r (Options.Wait), else the backend
//	r older than the history               the backend: the page, or ErrExpired once r is compacted
//	r newer than the backend, or bad       the backend: ErrInvalid
//	Revision 0 (offered with a 410)        the backend (the inconsistent continuation is its own)
//	any, while the cache re-lists          the backend
//
// Without Options.Tokens a list that does not fit in one page, and its
// continuations, are the backend's. The cache's history is its own: a
// compaction made through it shortens it as the backend's, one made
// elsewhere (another replica) does not, so the cache may still serve a
// token the backend would refuse, with that revision's pages.

// List reads the keys under prefix from the cache when it can (see the
// table above and the one in read.go), else from the backend.
func (c *Cache) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	if !c.holds(prefix) {
		return c.backend.List(ctx, prefix, opts)
	}
	if opts.Continue != "" {
		return c.listContinue(ctx, prefix, opts)
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

// paging reports whether the cache issues and serves continue tokens.
func (c *Cache) paging() bool { return c.opts.Tokens.Secret != nil }

// list reads the first page from the tree, or from the snapshot at an
// older Exact revision; false when the history does not reach back that
// far, or more pages follow and the cache does not page.
func (c *Cache) list(prefix string, opts storage.ListOptions) (storage.ListResult, bool) {
	c.mu.RLock()
	cur := c.log.Revision()
	if opts.Match == rv.Exact && opts.Revision != 0 && opts.Revision < cur {
		c.mu.RUnlock()
		sn, ok := c.snapshotAt(prefix, opts.Revision)
		if !ok {
			return storage.ListResult{}, false
		}
		return c.page(sn, prefix, prefix, 0, opts)
	}
	known := int64(-1)
	if n, ok := c.live.Dirs.Count(prefix); ok && opts.Predicate.Empty() {
		known = n
	}
	items, next, more := scan(c.live.Tree, prefix, prefix, opts.Limit, opts.Predicate, known)
	res := storage.ListResult{Items: items, Revision: cur}
	if !more {
		c.mu.RUnlock()
		return res, true
	}
	if !c.paging() {
		c.mu.RUnlock()
		return storage.ListResult{}, false
	}
	sn := c.liveSnapshot(prefix) // under the same lock: the state just read
	c.mu.RUnlock()
	c.finish(&res, sn, prefix, next, 0, opts.Predicate)
	return res, true
}

// listContinue serves the page a continue token points to from the
// snapshot at its revision, or sends the token to the backend (see the
// table above).
func (c *Cache) listContinue(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	if !c.paging() {
		return c.backend.List(ctx, prefix, opts)
	}
	tok, err := c.opts.Tokens.Decode(prefix, opts.Continue)
	if err != nil || tok.Revision == 0 {
		return c.backend.List(ctx, prefix, opts) // it words the error as its own
	}
	cur, _, ready := c.revision()
	if !ready {
		return c.backend.List(ctx, prefix, opts)
	}
	if tok.Revision > cur {
		// Issued by the backend (or another replica) ahead of this
		// cache: wait for it, unless the backend has not got there
		// either (its error is the answer).
		brev, err := c.backend.Revision(ctx)
		if err != nil || tok.Revision > brev || !c.fresh(ctx, tok.Revision) {
			return c.backend.List(ctx, prefix, opts)
		}
	}
	sn, ok := c.snapshotAt(prefix, tok.Revision)
	if !ok {
		return c.backend.List(ctx, prefix, opts)
	}
	res, _ := c.page(sn, prefix, prefix+tok.Key, tok.Offset, opts) // the cache pages: always served
	return res, nil
}

// page reads a page of sn from key start on; offset counts the items
// of earlier pages. false when more pages follow and the cache does not
// page.
func (c *Cache) page(sn *keytree.Snapshot, prefix, start string, offset int64, opts storage.ListOptions) (storage.ListResult, bool) {
	known := int64(-1)
	switch {
	case !opts.Predicate.Empty():
	case start == prefix:
		known, _ = sn.Known(prefix) // not counted for a whole list: the scan counts
	default:
		known = max(sn.Count(prefix)-offset, 0) // counted once per snapshot, for Remaining too
	}
	items, next, more := scan(sn.Tree, prefix, start, opts.Limit, opts.Predicate, known)
	res := storage.ListResult{Items: items, Revision: sn.Rev}
	if more {
		if !c.paging() {
			return storage.ListResult{}, false
		}
		c.finish(&res, sn, prefix, next, offset, opts.Predicate)
	}
	return res, true
}

// finish sets the continue token and remaining count of a page of sn
// after which more items follow from key next.
func (c *Cache) finish(res *storage.ListResult, sn *keytree.Snapshot, prefix, next string, offset int64, p storage.Predicate) {
	offset += int64(len(res.Items))
	res.Continue = c.opts.Tokens.Encode(prefix, rv.Token{Revision: sn.Rev, Key: next[len(prefix):], Offset: offset})
	if p.Empty() {
		n := max(sn.Count(prefix)-offset, 0)
		res.Remaining = &n
	}
}

// scan reads up to limit items matching p (all when limit is 0) from
// the keys under prefix, from key start on. When matching items are
// left out, more is true and next is the key of the first of them.
// known, when not negative, is the number of keys under prefix from
// start on (p must then be empty): the keys are read without looking at
// each, as they follow each other in the tree.
func scan(t *keytree.Tree, prefix, start string, limit int64, p storage.Predicate, known int64) (items []storage.Object, next string, more bool) {
	if known >= 0 && p.Empty() {
		if items, next, more, ok := scanKnown(t, prefix, start, limit, known); ok {
			return items, next, more
		}
	}
	all := p.Empty()
	size := max(known, 0)
	if !all {
		size = 0 // a predicate may keep few: grow as needed
	}
	if limit > 0 {
		size = min(size, limit)
	}
	items = make([]storage.Object, 0, size)
	t.AscendGreaterOrEqual(&keytree.Item{Key: start}, func(it *keytree.Item) bool {
		if !strings.HasPrefix(it.Key, prefix) {
			return false
		}
		obj := it.Object()
		if !all && !p.Matches(obj) {
			return true
		}
		if limit > 0 && int64(len(items)) == limit {
			next, more = it.Key, true
			return false
		}
		items = append(items, obj)
		return true
	})
	return items, next, more
}

// scanKnown is scan of the known keys under prefix from start on,
// without a predicate. The keys under a prefix are contiguous in the
// tree, so it takes that many from start on, then checks that the last
// one is under prefix and the one after it is not (unless it is the
// next page's); false if the count was wrong.
func scanKnown(t *keytree.Tree, prefix, start string, limit, known int64) (items []storage.Object, next string, more, ok bool) {
	n := known
	if limit > 0 && limit < n {
		n, more = limit, true
	}
	items = make([]storage.Object, 0, n)
	after, found := "", false
	t.AscendGreaterOrEqual(&keytree.Item{Key: start}, func(it *keytree.Item) bool {
		if int64(len(items)) == n {
			after, found = it.Key, true
			return false
		}
		items = append(items, it.Object())
		return true
	})
	if int64(len(items)) != n || n > 0 && !strings.HasPrefix(items[n-1].Key, prefix) ||
		(found && strings.HasPrefix(after, prefix)) != more {
		return nil, "", false, false
	}
	if more {
		next = after
	}
	return items, next, more, true
}
