package keytree_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/internal/keytree"
)

// TestSnapshotCounts walks the example of Snapshot's doc: a recorded
// count is answered as recorded (even a wrong one: it is the live count
// at the snapshot's revision), an unrecorded one is scanned once.
func TestSnapshotCounts(t *testing.T) {
	type step struct {
		op     string // set (records n), count or known (want n, and ok for known)
		prefix string
		n      int64
		ok     bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"recorded, no scan", []step{{"set", "/a/", 2, false}, {"known", "/a/", 2, true}, {"count", "/a/", 2, false}}},
		{"recorded wins over the tree", []step{{"set", "/a/", 7, false}, {"count", "/a/", 7, false}}},
		{"first record wins", []step{{"set", "/a/", 2, false}, {"set", "/a/", 5, false}, {"count", "/a/", 2, false}}},
		{"unknown, then scanned once and recorded", []step{{"known", "/a", -1, false}, {"count", "/a", 2, false},
			{"known", "/a", 2, true}, {"set", "/a", 9, false}, {"count", "/a", 2, false}}},
		{"never recorded", []step{{"known", "/b/", -1, false}, {"count", "/c/", 0, false}, {"known", "/c/", 0, true}, {"count", "", 3, false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sn := keytree.NewSnapshot(7, treeOf("/a/1", "/a/2", "/b/1"))
			for i, s := range tt.steps {
				switch s.op {
				case "set":
					sn.SetCount(s.prefix, s.n)
				case "count":
					if got := sn.Count(s.prefix); got != s.n {
						t.Fatalf("step %d: Count(%q): got %d; want %d", i, s.prefix, got, s.n)
					}
				case "known":
					if got, ok := sn.Known(s.prefix); got != s.n || ok != s.ok {
						t.Fatalf("step %d: Known(%q): got %d, %v; want %d, %v", i, s.prefix, got, ok, s.n, s.ok)
					}
				}
			}
		})
	}
}

// TestSnapshotCopyOnWrite: writes to the live tree after the clone do
// not show in the snapshot, nor its count.
func TestSnapshotCopyOnWrite(t *testing.T) {
	live := treeOf("/a/1", "/a/2", "/b/1")
	sn := keytree.NewSnapshot(7, live.Clone())
	live.Delete(&keytree.Item{Key: "/a/1"})
	live.ReplaceOrInsert(&keytree.Item{Key: "/a/3", Obj: storage.Object{Key: "/a/3"}})
	if got, want := keysOf(sn.Tree), []string{"/a/1", "/a/2", "/b/1"}; !slices.Equal(got, want) {
		t.Errorf("snapshot keys: got %q; want %q", got, want)
	}
	if got, want := keysOf(live), []string{"/a/2", "/a/3", "/b/1"}; !slices.Equal(got, want) {
		t.Errorf("live keys: got %q; want %q", got, want)
	}
	if got := sn.Count("/a/"); got != 2 || sn.Rev != 7 {
		t.Errorf("snapshot Count(/a/) @%d: got %d; want 2 @7", sn.Rev, got)
	}
}

// TestSnapshotConcurrentCounts: counts are safe for concurrent use (run
// with -race) and agree.
func TestSnapshotConcurrentCounts(t *testing.T) {
	sn := keytree.NewSnapshot(1, treeOf("/a/1", "/a/2", "/b/1"))
	var wg sync.WaitGroup
	got := make([]int64, 8)
	for i := range got {
		wg.Go(func() {
			if i%2 == 0 {
				sn.SetCount("/b/", 1)
			}
			got[i] = sn.Count("/a/") + sn.Count("/b/")
		})
	}
	wg.Wait()
	for i, n := range got {
		if n != 3 {
			t.Errorf("goroutine %d: got %d keys under /a/ and /b/; want 3", i, n)
		}
	}
}
