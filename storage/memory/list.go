package memory

import (
	"context"
	"strings"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/keytree"
)

// Paginated lists. The first page of a list that does not fit in one page
// clones the tree (O(1), under the read lock, so the clone is exactly the
// state at the page's revision) and caches the clone by revision; its
// continue token names that revision, the next key and how many items
// were returned so far:
//
//	first page, limit 2, rev 7:   a b | c d e    → token {7, "c", 2}
//	a write at rev 8 deletes c:   the snapshot at 7 still holds c
//	second page with {7, "c", 2}: c d | e        → token {7, "e", 4}
//
// Each page is an O(log n) seek plus the page, however deep it is.
// remainingItemCount is count(prefix at 7) - offset - page: the count is
// recorded when the snapshot is taken, from per-directory key counts the
// writers maintain, so no page counts the collection. A snapshot evicted
// from the cache is rebuilt from history (as Exact reads are); once its
// revision is compacted the token fails with ErrExpired and offers a
// token at revision 0 that goes on from the same key at the latest
// revision.

// List reads the keys under prefix.
func (s *Store) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	if opts.Continue != "" {
		return s.listContinue(prefix, opts)
	}
	if opts.Match == rv.NotOlderThan || opts.Match == rv.Exact {
		if err := s.waitFor(ctx, prefix, opts.Revision); err != nil {
			return storage.ListResult{}, err
		}
	}
	var exact uint64
	if opts.Match == rv.Exact {
		exact = opts.Revision
	}
	if res, ok := s.listCurrent(prefix, prefix, 0, opts, exact); ok {
		return res, nil
	}
	sn, err := s.snapshotAt(prefix, exact)
	if err != nil {
		return storage.ListResult{}, err
	}
	return s.pageOf(sn, prefix, prefix, 0, opts), nil
}

// listCurrent reads a page from the live tree, and snapshots it if more
// pages follow. offset counts the items of earlier pages. If exact is
// not 0 and not the current revision, it reads nothing and returns false.
func (s *Store) listCurrent(prefix, start string, offset int64, opts storage.ListOptions, exact uint64) (storage.ListResult, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	rev := s.rev.Load()
	if exact != 0 && exact != rev {
		return storage.ListResult{}, false
	}
	size := opts.Limit
	if n, ok := s.live.Dirs.Count(prefix); ok && opts.Predicate.Empty() && (size == 0 || n <= size) {
		if start == prefix { // the whole collection, and the count says how big
			return storage.ListResult{Items: scanAll(s.live.Tree, prefix, n), Revision: rev}, true
		}
		size = n
	}
	items, next, more := scan(s.live.Tree, prefix, start, opts.Limit, opts.Predicate, size)
	res := storage.ListResult{Items: items, Revision: rev}
	if !more {
		return res, true
	}
	sn := s.snapshotLocked(prefix)
	if start != prefix { // an inconsistent continuation: the offset is not ours
		offset = sn.Count(prefix) - keytree.CountFrom(sn.Tree, prefix, start)
	}
	s.finish(&res, sn, prefix, next, offset, opts.Predicate)
	return res, true
}

// pageOf reads a page from a snapshot.
func (s *Store) pageOf(sn *keytree.Snapshot, prefix, start string, offset int64, opts storage.ListOptions) storage.ListResult {
	size := opts.Limit
	if opts.Predicate.Empty() && (size == 0 || size > sn.Count(prefix)-offset) {
		size = sn.Count(prefix) - offset
	}
	items, next, more := scan(sn.Tree, prefix, start, opts.Limit, opts.Predicate, size)
	res := storage.ListResult{Items: items, Revision: sn.Rev}
	if more {
		s.finish(&res, sn, prefix, next, offset, opts.Predicate)
	}
	return res
}

// finish sets the continue token and remaining count of a page after
// which more keys follow.
func (s *Store) finish(res *storage.ListResult, sn *keytree.Snapshot, prefix, next string, offset int64, p storage.Predicate) {
	offset += int64(len(res.Items))
	res.Continue = s.opts.Tokens.Encode(prefix, rv.Token{Revision: sn.Rev, Key: next[len(prefix):], Offset: offset})
	if p.Empty() {
		n := max(sn.Count(prefix)-offset, 0)
		res.Remaining = &n
	}
}

// listContinue reads the page a continue token points to.
func (s *Store) listContinue(prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	tok, err := s.opts.Tokens.Decode(prefix, opts.Continue)
	if err != nil {
		return storage.ListResult{}, &storage.Error{Err: storage.ErrInvalid, Key: prefix, Msg: err.Error()}
	}
	start := prefix + tok.Key
	if tok.Revision == 0 {
		res, _ := s.listCurrent(prefix, start, 0, opts, 0)
		return res, nil
	}
	if cur := s.rev.Load(); tok.Revision > cur {
		return storage.ListResult{}, &storage.Error{Err: storage.ErrInvalid, Key: prefix, Revision: cur,
			Msg: "continue token is newer than the store; start the list again without continue"}
	}
	sn, err := s.snapshotAt(prefix, tok.Revision)
	if err != nil {
		e := s.expired(prefix, tok.Revision)
		e.Msg = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."
		e.Continue = s.opts.Tokens.Encode(prefix, rv.Token{Key: tok.Key, Offset: tok.Offset})
		return storage.ListResult{}, e
	}
	return s.pageOf(sn, prefix, start, tok.Offset, opts), nil
}

// scan reads up to limit items matching p (all when limit is 0) from the
// keys under prefix, starting at key start. When it stops before the end
// of the prefix, more is true and next is the first key not read. size
// is a capacity hint, exact when p is empty.
func scan(t *keytree.Tree, prefix, start string, limit int64, p storage.Predicate, size int64) (items []storage.Object, next string, more bool) {
	all := p.Empty()
	if !all { // a predicate may keep few: grow as needed
		size = min(size, 1024)
	}
	items = make([]storage.Object, 0, max(size, 0))
	t.AscendGreaterOrEqual(&keytree.Item{Key: start}, func(it *keytree.Item) bool {
		if !strings.HasPrefix(it.Key, prefix) {
			return false
		}
		if limit > 0 && int64(len(items)) == limit {
			next, more = it.Key, true
			return false
		}
		obj := it.Object()
		if all || p.Matches(obj) {
			items = append(items, obj)
		}
		return true
	})
	return items, next, more
}

// scanAll returns the n items under prefix, n being their exact count.
// The keys under a prefix are the first ones at or after it in key
// order, so it reads n items from prefix on without testing their keys.
func scanAll(t *keytree.Tree, prefix string, n int64) []storage.Object {
	items := make([]storage.Object, n)
	if n == 0 {
		return items
	}
	i := 0
	t.AscendGreaterOrEqual(&keytree.Item{Key: prefix}, func(it *keytree.Item) bool {
		items[i] = it.Object()
		i++
		return i < len(items)
	})
	return items[:i] // i == n: the writers keep the counts under the same lock as the tree
}
