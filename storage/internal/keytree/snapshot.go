package keytree

import "sync"

// A Snapshot is the state at one revision: a copy-on-write clone of the
// live tree, never modified once published. Clone is O(1); the live tree
// copies a node the first time a later write touches it, so a snapshot
// costs memory only for the parts of the tree written since.
//
// Its counts cache the number of keys under a list prefix at Rev, for
// remainingItemCount. A list's first page records it from the live
// directory counts (Dirs, read under the same lock as the clone); a
// prefix they cannot answer is counted once by scanning the snapshot:
//
//	snapshot @7 of {/a/1, /a/2, /b/1}, SetCount("/a/", 2) from Dirs
//	Count("/a/") = 2   recorded, no scan
//	Count("/a")  = 2   not a directory: scanned once, then recorded
//	Known("/b/") = -1, false   never recorded (Count would scan)
type Snapshot struct {
	Rev  uint64
	Tree *Tree

	mu     sync.Mutex
	counts map[string]int64
}

// NewSnapshot returns the snapshot of t at rev; t must not be modified
// afterwards.
func NewSnapshot(rev uint64, t *Tree) *Snapshot {
	return &Snapshot{Rev: rev, Tree: t, counts: map[string]int64{}}
}

// SetCount records n keys under prefix, unless already known.
func (sn *Snapshot) SetCount(prefix string, n int64) {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	if _, ok := sn.counts[prefix]; !ok {
		sn.counts[prefix] = n
	}
}

// Known returns the number of keys under prefix, -1 and false if not yet
// recorded.
func (sn *Snapshot) Known(prefix string) (int64, bool) {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	n, ok := sn.counts[prefix]
	if !ok {
		return -1, false
	}
	return n, true
}

// Count returns the number of keys under prefix, counted once.
func (sn *Snapshot) Count(prefix string) int64 {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	if n, ok := sn.counts[prefix]; ok {
		return n
	}
	n := CountFrom(sn.Tree, prefix, prefix)
	sn.counts[prefix] = n
	return n
}
