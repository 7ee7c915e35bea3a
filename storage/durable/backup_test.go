package durable_test

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kapi-dev/kapi/storage/durable"
)

// TestBackupRestore takes a backup while writers run, restores it into
// a new directory and checks the restored store: the state and history
// at the backup's revision, and writes going on from there.
func TestBackupRestore(t *testing.T) {
	s := open(t, t.TempDir(), durable.Options{})
	h, state := history{}, map[string]string{}
	write(t, s, h, state, "+/a=1", "+/b=1", "~/a=2", "-/b")
	first, _ := s.Revision(t.Context())

	// Writers keep going while the backup is taken: it holds a
	// consistent state, at some revision at or after first.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.Create(t.Context(), obj(fmt.Sprintf("/w%d/%05d", w, i), "x")); err != nil {
					t.Errorf("Create: %v", err)
					return
				}
			}
		})
	}
	backup := filepath.Join(t.TempDir(), "backup.db")
	err := s.BackupFile(t.Context(), backup)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("BackupFile: %v", err)
	}

	dir := filepath.Join(t.TempDir(), "restored")
	if err := durable.Restore(backup, dir); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	r := open(t, dir, durable.Options{})
	rev, _ := r.Revision(t.Context())
	if rev < first {
		t.Fatalf("restored at revision %d; want at least %d", rev, first)
	}
	want, err := listAt(t, s, rev)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []uint64{first, rev} {
		got, err := listAt(t, r, at)
		if at == rev {
			h[rev] = want
		}
		if err != nil || !maps.Equal(got, h[at]) {
			t.Fatalf("restored store at %d: %d keys, %v; want %d keys", at, len(got), err, len(h[at]))
		}
	}
	c, err := r.Create(t.Context(), obj("/after-restore", "1"))
	if err != nil || c.Revision != rev+1 {
		t.Fatalf("Create after restore: revision %d, %v; want %d", c.Revision, err, rev+1)
	}

	t.Run("into a store", func(t *testing.T) {
		err := durable.Restore(backup, dir)
		if !errors.Is(err, durable.ErrDataExists) {
			t.Fatalf("Restore over a store: %v; want ErrDataExists", err)
		}
	})
	t.Run("damaged backup", func(t *testing.T) {
		fi, _ := os.Stat(backup)
		if err := os.Truncate(backup, fi.Size()/2); err != nil {
			t.Fatal(err)
		}
		err := durable.Restore(backup, filepath.Join(t.TempDir(), "other"))
		if !errors.Is(err, durable.ErrCorrupt) {
			t.Fatalf("Restore of a truncated backup: %v; want ErrCorrupt", err)
		}
	})
}
