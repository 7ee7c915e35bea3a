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
