package keytree

import (
	"sync"

	"github.com/kapi-dev/kapi/storage/internal/revlru"
)

// Live is the tree that writes modify, with its directory counts. Its
// owner's lock guards both: writes hold it exclusively (and keep Dirs
// in step with Tree), reads hold it shared. Readers may Clone: clones
// are serialized here, as a B-tree's Clone is safe alongside readers but
// not alongside itself.
type Live struct {
	Tree *Tree
	Dirs Dirs

	clone sync.Mutex
}

// Clone returns an O(1) copy-on-write clone of the tree. Callers hold
// the owner's lock (shared is enough).
func (l *Live) Clone() *Tree {
	l.clone.Lock()
	defer l.clone.Unlock()
	return l.Tree.Clone()
}

// Snapshot returns the snapshot of the tree at rev, the owner's current
// revision: the one snaps holds (oldest is the oldest revision of the
// owner's history), else a clone put in snaps. prefix is the list it is
// for: its count is recorded when Dirs know it. Callers hold the owner's
// lock (shared is enough: no write runs meanwhile).
func (l *Live) Snapshot(snaps *revlru.Cache[*Snapshot], rev, oldest uint64, prefix string) *Snapshot {
	sn, ok := snaps.Get(rev, oldest)
	if !ok {
		sn = snaps.Put(rev, NewSnapshot(rev, l.Clone()))
	}
	if n, ok := l.Dirs.Count(prefix); ok {
		sn.SetCount(prefix, n)
	}
	return sn
}
