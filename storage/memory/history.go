package memory

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/keytree"
	"github.com/kapi-dev/kapi/watch"
)

// Reads at older revisions undo the log. The log holds, for every write
// after the compacted revision, the new state and the state it replaced,
// so the state at N is the current state with every change after N
// undone, newest first:
//
//	log:      r5 Added a=1   r6 Modified a=2 (prev a=1)   r7 Deleted b (prev b=9)
//	current:  {a=2}
//	at r5:    undo r7 (put b=9), undo r6 (put a=1)        → {a=1, b=9}
//	at r4:    … then undo r5 (remove a)                    → {b=9}
//
// Reads below the compacted revision fail with ErrExpired: the changes
// they would undo are gone.

// expired is the error for a read at a compacted revision.
func (s *Store) expired(key string, rev uint64) *storage.Error {
	return &storage.Error{Err: storage.ErrExpired, Key: key, Revision: s.rev.Load(),
		Msg: fmt.Sprintf("too old resource version: %d (%d)", rev, s.log.Oldest())}
}

// getAt reads key at rev < current from a cached snapshot or from the
// first change to key after rev. Callers hold mu shared.
func (s *Store) getAt(key string, rev uint64) (storage.Object, error) {
	if rev < s.log.Oldest() {
		return storage.Object{}, s.expired(key, rev)
	}
	var state any
	if sn, ok := s.snaps.Get(rev, s.log.Oldest()); ok {
		if it, ok := sn.Tree.Get(&keytree.Item{Key: key}); ok {
			state = it.Obj
		}
	} else if c, ok := s.firstChange(key, rev); ok {
		state = c.Prev
	} else if it, ok := s.live.Tree.Get(&keytree.Item{Key: key}); ok {
		state = it.Obj
	}
	if state == nil {
		return storage.Object{}, &storage.Error{Err: storage.ErrNotFound, Key: key, Revision: rev}
	}
	return state.(storage.Object), nil
}

// firstChange returns the first change to key after rev.
func (s *Store) firstChange(key string, rev uint64) (watch.Change, bool) {
	changes, err := s.log.Since(rev)
	if err != nil {
		return watch.Change{}, false
	}
	for c := range changes {
		if keyOf(c) == key {
			return c, true
		}
	}
	return watch.Change{}, false
}

func keyOf(c watch.Change) string {
	if c.Object != nil {
		return c.Object.(storage.Object).Key
	}
	return c.Prev.(storage.Object).Key
}

// snapshotAt returns the snapshot at rev ≤ current: cached, the live tree
// cloned, or rebuilt from history. prefix is the list it is for: its key
// count is recorded with the snapshot.
func (s *Store) snapshotAt(prefix string, rev uint64) (*keytree.Snapshot, error) {
	s.mu.RLock()
	if rev < s.log.Oldest() {
		s.mu.RUnlock()
		return nil, s.expired(prefix, rev)
	}
	if sn, ok := s.snaps.Get(rev, s.log.Oldest()); ok {
		s.mu.RUnlock()
		return sn, nil
	}
	if rev == s.rev.Load() {
		sn := s.snapshotLocked(prefix)
		s.mu.RUnlock()
		return sn, nil
	}
	changes, err := s.log.Since(rev)
	if err != nil {
		s.mu.RUnlock()
		return nil, s.expired(prefix, rev)
	}
	undo := slices.Collect(changes)
	t := s.live.Clone()
	n, known := s.live.Dirs.Count(prefix)
	s.mu.RUnlock()

	for _, c := range slices.Backward(undo) {
		k := keyOf(c)
		switch c.Type {
		case watch.Added:
			t.Delete(&keytree.Item{Key: k})
		case watch.Modified:
			t.ReplaceOrInsert(&keytree.Item{Key: k, Obj: c.Prev})
		case watch.Deleted:
			t.ReplaceOrInsert(&keytree.Item{Key: k, Obj: c.Prev})
		}
		if strings.HasPrefix(k, prefix) {
			switch c.Type {
			case watch.Added:
				n--
			case watch.Deleted:
				n++
			}
		}
	}
	sn := keytree.NewSnapshot(rev, t)
	if known {
		sn.SetCount(prefix, n)
	}
	return s.snaps.Put(rev, sn), nil
}

// snapshotLocked returns the snapshot of the current state, cached.
// Callers hold mu (shared is enough: no write runs meanwhile).
func (s *Store) snapshotLocked(prefix string) *keytree.Snapshot {
	return s.live.Snapshot(&s.snaps, s.rev.Load(), s.log.Oldest(), prefix)
}
