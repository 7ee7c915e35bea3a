package memory

import (
	"strings"
	"sync"
)

// A snapshot is the state of the store at one revision: a copy-on-write
// clone of the tree, never modified once published. Clone is O(1); the
// live tree copies a node the first time a later write touches it, so a
// snapshot costs memory only for the parts of the tree written since.
//
// counts caches the number of keys under a list prefix at rev, for
// remainingItemCount. A list's first page records it from the live
// directory counts (taken under the same lock as the clone); a prefix the
// counts cannot answer is counted once by scanning the snapshot.
type snapshot struct {
	rev  uint64
	tree *tree

	mu     sync.Mutex
	counts map[string]int64
}

func newSnapshot(rev uint64, t *tree) *snapshot {
	return &snapshot{rev: rev, tree: t, counts: map[string]int64{}}
}

// setCount records n keys under prefix, unless already known.
func (sn *snapshot) setCount(prefix string, n int64) {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	if _, ok := sn.counts[prefix]; !ok {
		sn.counts[prefix] = n
	}
}

// count returns the number of keys under prefix.
func (sn *snapshot) count(prefix string) int64 {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	if n, ok := sn.counts[prefix]; ok {
		return n
	}
	var n int64
	sn.tree.AscendGreaterOrEqual(&item{key: prefix}, func(it *item) bool {
		if !strings.HasPrefix(it.key, prefix) {
			return false
		}
		n++
		return true
	})
	sn.counts[prefix] = n
	return n
}

// snapshots is a small cache of snapshots by revision, least recently used
// evicted first. Snapshots older than the store's history are dropped
// when looked up: their revision is compacted.
type snapshots struct {
	mu   sync.Mutex
	max  int
	list []*snapshot // least recently used first
}

// get returns the snapshot at rev, if cached and not older than oldest.
func (c *snapshots) get(rev, oldest uint64) *snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.expire(oldest)
	for i, sn := range c.list {
		if sn.rev == rev {
			copy(c.list[i:], c.list[i+1:])
			c.list[len(c.list)-1] = sn
			return sn
		}
	}
	return nil
}

// put caches sn and returns it, or the snapshot already cached at its
// revision.
func (c *snapshots) put(sn *snapshot) *snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, old := range c.list {
		if old.rev == sn.rev {
			return old
		}
	}
	if len(c.list) >= c.max {
		copy(c.list, c.list[1:])
		c.list = c.list[:len(c.list)-1]
	}
	c.list = append(c.list, sn)
	return sn
}

// expire drops snapshots older than oldest. Callers hold mu.
func (c *snapshots) expire(oldest uint64) {
	kept := c.list[:0]
	for _, sn := range c.list {
		if sn.rev >= oldest {
			kept = append(kept, sn)
		}
	}
	clear(c.list[len(kept):])
	c.list = kept
}
