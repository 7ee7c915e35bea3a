package cache

import (
	"slices"

	"github.com/kapi-dev/kapi/storage/internal/keytree"
	"github.com/kapi-dev/kapi/watch"
)

// Snapshots. A paginated list is served from one snapshot (a
// keytree.Snapshot), the state of the cache at the revision its first
// page was read at: a copy-on-write clone of the tree (google/btree's
// Clone is O(1); the live tree copies a node the first time the feeder
// touches it afterwards, so a snapshot costs memory only for the parts
// written since). Snapshots are taken
// lazily, by the first page of a list that needs more than one, not on
// every event as kube's cacher does (ListFromCacheSnapshot): the feeder
// pays nothing for them.
//
// A continuation whose snapshot is not cached (evicted, or the first
// page was the backend's) gets it rebuilt from the cache's history, as
// Exact reads do; one older than the history is the backend's.
//
//	first page, limit 2, cache at r7:    a b | c d e    → clone @7 cached, token {7, "c", 2}
//	the feeder applies r8 (delete c):    the live tree copies its path; @7 still holds c
//	second page, token {7, "c", 2}:      c d | e        from the clone @7
//	@7 evicted, third page:              undo r8.. on a clone of the live tree → @7 again
//	7 older than the history:            the backend serves the token (or ErrExpired)

// snapshotAt returns the snapshot at rev: cached, the live tree cloned
// (rev is the cache's revision), or rebuilt from history by undoing the
// changes after rev, newest first (as the memory store does):
//
//	log:      r5 Added a=1   r6 Modified a=2 (prev a=1)   r7 Deleted b (prev b=9)
//	current:  {a=2}
//	at r5:    undo r7 (put b=9), undo r6 (put a=1)        → {a=1, b=9}
//
// prefix is the list it is for: its live count is recorded when the
// live tree is cloned. false if rev is older than the history, newer
// than the cache, or the cache is re-listing.
func (c *Cache) snapshotAt(prefix string, rev uint64) (*keytree.Snapshot, bool) {
	c.mu.RLock()
	cur, oldest := c.log.Revision(), c.log.Oldest()
	if !c.ready || rev < oldest || rev > cur {
		c.mu.RUnlock()
		return nil, false
	}
	if sn, ok := c.snaps.Get(rev, oldest); ok {
		c.mu.RUnlock()
		return sn, true
	}
	if rev == cur {
		sn := c.liveSnapshot(prefix)
		c.mu.RUnlock()
		return sn, true
	}
	changes, err := c.log.Since(rev)
	if err != nil {
		c.mu.RUnlock()
		return nil, false
	}
	undo := slices.Collect(changes)
	t := c.live.Clone()
	c.mu.RUnlock()
	for _, ch := range slices.Backward(undo) {
		k, ok := keyOf(ch)
		if !ok || ch.Type == watch.Bookmark {
			continue
		}
		if ch.Prev == nil {
			t.Delete(&keytree.Item{Key: k})
		} else {
			t.ReplaceOrInsert(&keytree.Item{Key: k, Obj: ch.Prev})
		}
	}
	return c.snaps.Put(rev, keytree.NewSnapshot(rev, t)), true
}

// liveSnapshot returns the snapshot of the tree at the cache's
// revision, cached, with prefix's key count when the directory counts
// know it. Callers hold mu (shared is enough: the feeder waits).
func (c *Cache) liveSnapshot(prefix string) *keytree.Snapshot {
	return c.live.Snapshot(&c.snaps, c.log.Revision(), c.log.Oldest(), prefix)
}
