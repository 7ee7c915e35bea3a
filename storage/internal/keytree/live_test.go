package keytree_test

import (
	"slices"
	"testing"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/keytree"
	"github.com/kapi-dev/kapi/storage/internal/revlru"
)

// liveOf returns a live tree holding keys (as treeOf), with its counts.
func liveOf(keys ...string) *keytree.Live {
	l := &keytree.Live{Tree: treeOf(keys...), Dirs: keytree.Dirs{}}
	for _, k := range keys {
		l.Dirs.Add(k, 1)
	}
	return l
}

// TestLiveSnapshot: a snapshot is cloned once per revision, then found
// in the cache; it records the live count of a directory prefix (not of
// another prefix), and later writes to the live tree do not show in it.
func TestLiveSnapshot(t *testing.T) {
	l := liveOf("/a/1", "/a/2", "/a0", "/b/1")
	snaps := &revlru.Cache[*keytree.Snapshot]{Max: 2}
	tests := []struct {
		rev    uint64
		prefix string
		same   bool  // the snapshot of the step before
		known  int64 // Known(prefix) afterwards
		keys   int   // how many the snapshot holds
	}{
		{7, "/a/", false, 2, 4},
		{7, "/b/", true, 1, 4}, // cached, and /b/'s count added
		{7, "/a", true, -1, 4}, // not a directory: not recorded
		{8, "/a/", false, 2, 4},
	}
	var prev *keytree.Snapshot
	for i, tt := range tests {
		sn := l.Snapshot(snaps, tt.rev, 0, tt.prefix)
		if sn.Rev != tt.rev || (sn == prev) != tt.same {
			t.Errorf("step %d: got a snapshot at %d, the same as before %v; want %d, %v", i, sn.Rev, sn == prev, tt.rev, tt.same)
		}
		if n, _ := sn.Known(tt.prefix); n != tt.known {
			t.Errorf("step %d: Known(%q): got %d; want %d", i, tt.prefix, n, tt.known)
		}
		if got := len(keysOf(sn.Tree)); got != tt.keys {
			t.Errorf("step %d: got %d keys; want %d", i, got, tt.keys)
		}
		if cached, ok := snaps.Get(tt.rev, 0); !ok || cached != sn {
			t.Errorf("step %d: the snapshot is not the one cached at %d", i, tt.rev)
		}
		prev = sn
	}

	sn := l.Snapshot(snaps, 8, 0, "/a/")
	l.Tree.Delete(&keytree.Item{Key: "/a/1"})
	l.Dirs.Add("/a/1", -1)
	l.Tree.ReplaceOrInsert(&keytree.Item{Key: "/c/1", Obj: storage.Object{Key: "/c/1"}})
	l.Dirs.Add("/c/1", 1)
	if got, want := keysOf(sn.Tree), []string{"/a/1", "/a/2", "/a0", "/b/1"}; !slices.Equal(got, want) {
		t.Errorf("snapshot @8 after writes: got keys %q; want %q", got, want)
	}
	if got, want := keysOf(l.Clone()), []string{"/a/2", "/a0", "/b/1", "/c/1"}; !slices.Equal(got, want) {
		t.Errorf("live clone: got keys %q; want %q", got, want)
	}
	if got := l.Snapshot(snaps, 9, 8, "/a/").Count("/a/"); got != 1 {
		t.Errorf("snapshot @9 Count(/a/): got %d; want 1", got)
	}
	if _, ok := snaps.Get(7, 8); ok {
		t.Error("snapshot @7 still cached with oldest 8; want it dropped")
	}
}
