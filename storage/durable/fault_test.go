package durable_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/durable"
)

// filled returns a closed store's directory holding n objects of 2 KiB.
func filled(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	s := open(t, dir, durable.Options{})
	for i := range n {
		if _, err := s.Create(t.Context(), obj(fmt.Sprintf("/k/%04d", i), strings.Repeat("x", 2048))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// highWater is the end of the last page the file's meta page reaches.
func highWater(t *testing.T, path string) int64 {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var size int64
	db.View(func(tx *bolt.Tx) error { size = tx.Size(); return nil })
	return size
}

// TestOpenDamaged: a damaged file is refused at open with ErrCorrupt,
// and left as it was (never re-initialized, never half-read into a
// store that would then serve less than was acknowledged).
func TestOpenDamaged(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"truncated mid-page", func(t *testing.T, path string) {
			if err := os.Truncate(path, highWater(t, path)-4096-1000); err != nil {
				t.Fatal(err)
			}
		}},
		{"truncated to half", func(t *testing.T, path string) {
			if err := os.Truncate(path, highWater(t, path)/2); err != nil {
				t.Fatal(err)
			}
		}},
		{"empty", func(t *testing.T, path string) {
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
		}},
		{"overwritten", func(t *testing.T, path string) {
			if err := os.WriteFile(path, bytes.Repeat([]byte("garbage!"), 8192), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"another bbolt database", func(t *testing.T, path string) {
			os.Remove(path)
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("other")); return err })
			db.Close()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filled(t, 200)
			path := filepath.Join(dir, durable.FileName)
			tt.damage(t, path)
			before, _ := os.ReadFile(path)
			s, err := durable.Open(dir, durable.Options{})
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded on a damaged file; want ErrCorrupt")
			}
			var oe *durable.OpenError
			if !errors.Is(err, durable.ErrCorrupt) || !errors.As(err, &oe) || oe.Path != path {
				t.Fatalf("Open: %v; want an *OpenError wrapping ErrCorrupt for %s", err, path)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
				t.Fatalf("Open changed the damaged file (%d bytes, now %d)", len(before), len(after))
			}
		})
	}
}

// TestOpenReadOnly: a data directory that cannot be written is refused
// at open with ErrNotWritable. Root writes anywhere, so as root the
// check runs in a child process without root's rights.
func TestOpenReadOnly(t *testing.T) {
	if dir := os.Getenv("KAPI_DURABLE_READONLY"); dir != "" {
		_, err := durable.Open(dir, durable.Options{})
		if !errors.Is(err, durable.ErrNotWritable) {
			t.Fatalf("Open of read-only %s: %v; want ErrNotWritable", dir, err)
		}
		return
	}
	tests := []struct {
		name     string
		existing bool // the directory holds a store already
	}{
		{"new", false},
		{"existing store", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.existing {
				dir = filled(t, 3)
				os.Chmod(filepath.Join(dir, durable.FileName), 0o444)
			}
			if err := os.Chmod(dir, 0o555); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(dir, 0o755) })
			if os.Geteuid() != 0 {
				_, err := durable.Open(dir, durable.Options{})
				if !errors.Is(err, durable.ErrNotWritable) {
					t.Fatalf("Open of read-only %s: %v; want ErrNotWritable", dir, err)
				}
				return
			}
			// The child runs a copy of this test binary that it can reach.
			bin := filepath.Join(t.TempDir(), "durable.test")
			if err := copyExecutable(os.Args[0], bin); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{dir, bin} {
				for d := filepath.Dir(p); strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
					if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o005 != 0o005 {
						os.Chmod(d, fi.Mode().Perm()|0o005)
					}
				}
			}
			cmd := exec.Command(bin, "-test.run=^TestOpenReadOnly$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), "KAPI_DURABLE_READONLY="+dir)
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			if out, err := cmd.CombinedOutput(); err != nil || !bytes.Contains(out, []byte("--- PASS: TestOpenReadOnly")) {
				t.Fatalf("child without root's rights: %v\n%s", err, out)
			}
		})
	}
}

// TestDiskFull: writes the disk refuses fail with ErrUnavailable, change
// nothing (memory, revision, file), and writes succeed again once there
// is room. The child process limits the size of the files it writes
// (RLIMIT_FSIZE), which fails the file's growth as a full disk does.
func TestDiskFull(t *testing.T) {
	if os.Getenv("KAPI_DURABLE_DISKFULL") != "" {
		diskFull(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDiskFull$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "KAPI_DURABLE_DISKFULL=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("refused writes: ")) {
		t.Fatalf("child: %v\n%s", err, out)
	}
	t.Logf("%s", bytes.TrimSpace(out))
}

func diskFull(t *testing.T) {
	// SIGXFSZ would kill the process at the limit; ignored, the write
	// fails with EFBIG instead.
	ignoreSIGXFSZ()
	dir := t.TempDir()
	s := open(t, dir, durable.Options{})
	path := filepath.Join(dir, durable.FileName)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var old syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old)
	limit := syscall.Rlimit{Cur: uint64(fi.Size()) + 256<<10, Max: old.Max}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{}
	refused := 0
	value := strings.Repeat("v", 2048)
	for i := 0; refused < 3 && i < 10000; i++ {
		key := fmt.Sprintf("/k/%05d", i)
		before, _ := s.Revision(t.Context())
		_, err := s.Create(t.Context(), obj(key, value))
		if err == nil {
			acked[key] = true
			continue
		}
		refused++
		var se *storage.Error
		if !errors.Is(err, storage.ErrUnavailable) || !errors.As(err, &se) || !strings.Contains(se.Msg, "not committed") {
			t.Fatalf("Create(%s) on a full disk: %v; want ErrUnavailable, not committed", key, err)
		}
		if after, _ := s.Revision(t.Context()); after != before {
			t.Fatalf("a refused write moved the revision from %d to %d", before, after)
		}
		if _, err := s.Get(t.Context(), key, storage.GetOptions{}); !storage.IsNotFound(err) {
			t.Fatalf("Get(%s) after its refused create: %v; want ErrNotFound", key, err)
		}
	}
	if refused == 0 {
		t.Fatalf("%d writes, none refused at a file limit of %d bytes", len(acked), limit.Cur)
	}
	syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old) // room again
	if _, err := s.Create(t.Context(), obj("/after", value)); err != nil {
		t.Fatalf("Create once there is room again: %v", err)
	}
	acked["/after"] = true
	s.Close()
	s = open(t, dir, durable.Options{})
	res, err := s.List(t.Context(), "/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range res.Items {
		if !acked[o.Key] {
			t.Errorf("after reopening: %s present; its write was refused", o.Key)
		}
		delete(acked, o.Key)
	}
	if len(acked) > 0 {
		t.Errorf("after reopening: %d acknowledged writes missing", len(acked))
	}
	fmt.Printf("refused writes: %d, after %d acknowledged\n", refused, len(res.Items)-1)
}

func copyExecutable(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o755)
}

// TestOpenLocked: a second store on a data directory in use is refused
// (ErrLocked) rather than sharing the file.
func TestOpenLocked(t *testing.T) {
	dir := t.TempDir()
	open(t, dir, durable.Options{})
	s, err := durable.Open(dir, durable.Options{})
	if err == nil {
		s.Close()
		t.Fatal("a second Open of a directory in use succeeded; want ErrLocked")
	}
	if !errors.Is(err, durable.ErrLocked) {
		t.Fatalf("second Open: %v; want ErrLocked", err)
	}
}
