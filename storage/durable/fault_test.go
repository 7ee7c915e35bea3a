package durable_test

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"

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

// crashImage returns a copy of the data directory of a store holding n
// objects of 2 KiB, taken while it is open (what a crash leaves: the
// writes in pebble's log), once its marker has caught up.
func crashImage(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	s := open(t, dir, durable.Options{})
	for i := range n {
		if _, err := s.Create(t.Context(), obj(fmt.Sprintf("/k/%04d", i), strings.Repeat("x", 2048))); err != nil {
			t.Fatal(err)
		}
	}
	rev, _ := s.Revision(t.Context())
	want := fmt.Sprintf("kapi-durable revision %d\n", rev)
	for i := 0; ; i++ {
		if b, _ := os.ReadFile(filepath.Join(dir, durable.MarkerName)); string(b) == want {
			break
		}
		if i == 100 {
			t.Fatalf("the marker did not reach revision %d", rev)
		}
		time.Sleep(20 * time.Millisecond)
	}
	image := t.TempDir()
	copyTree(t, dir, image)
	s.Close()
	return image
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if e.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// engineFile is the largest of the database's files matching pattern.
func engineFile(t *testing.T, dir, pattern string) string {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, durable.DirName, pattern))
	var best string
	var size int64 = -1
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.Size() > size {
			best, size = p, fi.Size()
		}
	}
	if best == "" {
		t.Fatalf("no %s in %s", pattern, dir)
	}
	return best
}

func truncateBy(t *testing.T, path string, frac float64) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, int64(float64(fi.Size())*frac)); err != nil {
		t.Fatal(err)
	}
}

// snapshot is every file of dir but the locks (the store's and
// pebble's, which Open creates empty where they are missing), by path.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && e.Name() != "lock" && e.Name() != "LOCK" {
			b, _ := os.ReadFile(p)
			files[p] = string(b)
		}
		return nil
	})
	return files
}

// TestOpenDamaged: a damaged data directory is refused at open with
// ErrCorrupt, and left as it was (never re-initialized, never half-read
// into a store that would then serve less than was acknowledged). The
// damage a crash cannot leave (pebble's log cut short, its MANIFEST cut
// short: both read as a shorter log) is told by the marker.
func TestOpenDamaged(t *testing.T) {
	tests := []struct {
		name   string
		crash  bool // a crash image (the writes in the log), not a closed store
		damage func(t *testing.T, dir string)
	}{
		{"log truncated mid-record", true, func(t *testing.T, dir string) {
			truncateBy(t, engineFile(t, dir, "*.log"), 0.5)
		}},
		{"log lost", true, func(t *testing.T, dir string) {
			os.Remove(engineFile(t, dir, "*.log"))
		}},
		{"table truncated mid-block", false, func(t *testing.T, dir string) {
			truncateBy(t, engineFile(t, dir, "*.sst"), 0.5)
		}},
		{"table overwritten", false, func(t *testing.T, dir string) {
			path := engineFile(t, dir, "*.sst")
			fi, _ := os.Stat(path)
			os.WriteFile(path, bytes.Repeat([]byte("garbage!"), int(fi.Size()/8)), 0o600)
		}},
		{"table lost", false, func(t *testing.T, dir string) {
			os.Remove(engineFile(t, dir, "*.sst"))
		}},
		{"MANIFEST truncated", false, func(t *testing.T, dir string) {
			truncateBy(t, engineFile(t, dir, "MANIFEST-*"), 0.3)
		}},
		{"MANIFEST empty", false, func(t *testing.T, dir string) {
			truncateBy(t, engineFile(t, dir, "MANIFEST-*"), 0)
		}},
		{"database emptied", false, func(t *testing.T, dir string) {
			paths, _ := filepath.Glob(filepath.Join(dir, durable.DirName, "*"))
			for _, p := range paths {
				os.Remove(p)
			}
		}},
		{"database missing", false, func(t *testing.T, dir string) {
			os.RemoveAll(filepath.Join(dir, durable.DirName))
		}},
		{"marker overwritten", false, func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, durable.MarkerName), []byte("garbage"), 0o600)
		}},
		{"another pebble database", false, func(t *testing.T, dir string) {
			path := filepath.Join(dir, durable.DirName)
			os.RemoveAll(path)
			db, err := pebble.Open(path, &pebble.Options{})
			if err != nil {
				t.Fatal(err)
			}
			db.Set([]byte("other"), []byte("1"), pebble.Sync)
			db.Close()
		}},
		{"a store of the first format", false, func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "kapi.db"), []byte("bbolt"), 0o600)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var dir string
			if tt.crash {
				dir = crashImage(t, 200)
			} else {
				dir = filled(t, 200)
			}
			tt.damage(t, dir)
			before := snapshot(t, dir)
			s, err := durable.Open(dir, durable.Options{})
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded on a damaged directory; want ErrCorrupt")
			}
			var oe *durable.OpenError
			if !errors.Is(err, durable.ErrCorrupt) || !errors.As(err, &oe) || !strings.HasPrefix(oe.Path, dir) {
				t.Fatalf("Open: %v; want an *OpenError wrapping ErrCorrupt in %s", err, dir)
			}
			if after := snapshot(t, dir); !maps.Equal(before, after) {
				t.Fatalf("Open changed the damaged directory (%d files, now %d: %v)", len(before), len(after), slices.Collect(maps.Keys(after)))
			}
		})
	}
}

// TestOpenCrashImage: a crash image (the writes in pebble's log, not
// yet in its tables) opens with every acknowledged write.
func TestOpenCrashImage(t *testing.T) {
	dir := crashImage(t, 200)
	s := open(t, dir, durable.Options{})
	res, err := s.List(t.Context(), "/", storage.ListOptions{})
	if err != nil || len(res.Items) != 200 {
		t.Fatalf("after the crash: %d objects, %v; want 200", len(res.Items), err)
	}
}

// TestDamageAboveMarker: what the marker cannot tell. pebble reads a
// torn tail of its last log as the end (what a crash mid-append leaves),
// so damage confined to the writes after the marker's revision reads as
// a crash: Open succeeds with a prefix of the history, at a revision at
// least the marker's, never with a gap or half a write. The marker is
// written every 100 ms; here it is set back to revision 2 (as if it had
// not moved since the first write), and the last log cut at each tenth
// of its length. (Cut below the marker: TestOpenDamaged, ErrCorrupt.)
func TestDamageAboveMarker(t *testing.T) {
	const n = 200
	image := crashImage(t, n)
	logs, _ := filepath.Glob(filepath.Join(image, durable.DirName, "*.log"))
	slices.Sort(logs) // pebble's file numbers, zero-padded: the last is the newest
	if len(logs) == 0 {
		t.Fatal("no log in the crash image")
	}
	last, err := filepath.Rel(image, logs[len(logs)-1])
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	for tenth := 1; tenth < 10; tenth++ {
		t.Run(fmt.Sprintf("cut at %d0%%", tenth), func(t *testing.T) {
			dir := t.TempDir()
			copyTree(t, image, dir)
			os.WriteFile(filepath.Join(dir, durable.MarkerName), []byte("kapi-durable revision 2\n"), 0o600)
			truncateBy(t, filepath.Join(dir, last), float64(tenth)/10)
			s := open(t, dir, durable.Options{})
			rev, _ := s.Revision(t.Context())
			res, err := s.List(t.Context(), "/", storage.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// Revision r holds the (r-1)th create: /k/0000 is revision 2.
			if rev < 2 || rev > n+1 || len(res.Items) != int(rev)-1 {
				t.Fatalf("opened at revision %d with %d objects; want a prefix of the %d creates, at revision 2 or more", rev, len(res.Items), n)
			}
			for i, o := range res.Items {
				if want := fmt.Sprintf("/k/%04d", i); o.Key != want || len(o.Value) != 2048 || o.Revision != uint64(i)+2 {
					t.Fatalf("item %d: %s (%d bytes) at %d; want %s (2048 bytes) at %d", i, o.Key, len(o.Value), o.Revision, want, i+2)
				}
			}
			t.Logf("opened at revision %d: the last %d writes lost", rev, n+1-int(rev))
			lost += n + 1 - int(rev)
		})
	}
	if lost == 0 {
		t.Fatal("no cut lost a write: the test did not cut into the log's records")
	}
	// A log before the last is read strictly (pebble's strict WAL tail):
	// cut, it is damage whatever the marker says.
	for _, older := range logs[:len(logs)-1] {
		rel, _ := filepath.Rel(image, older)
		t.Run("older log "+filepath.Base(older)+" cut", func(t *testing.T) {
			dir := t.TempDir()
			copyTree(t, image, dir)
			os.WriteFile(filepath.Join(dir, durable.MarkerName), []byte("kapi-durable revision 2\n"), 0o600)
			truncateBy(t, filepath.Join(dir, rel), 0.5)
			s, err := durable.Open(dir, durable.Options{})
			t.Logf("%v", err)
			if !errors.Is(err, durable.ErrCorrupt) {
				if err == nil {
					s.Close()
				}
				t.Fatalf("Open: %v; want ErrCorrupt", err)
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
				os.Chmod(filepath.Join(dir, durable.MarkerName), 0o444)
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
	var largest int64 // the limit applies to every file, pebble's log among them
	filepath.WalkDir(dir, func(_ string, e os.DirEntry, err error) error {
		if fi, ierr := e.Info(); err == nil && ierr == nil && fi.Size() > largest {
			largest = fi.Size()
		}
		return nil
	})
	var old syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old)
	limit := syscall.Rlimit{Cur: uint64(largest) + 256<<10, Max: old.Max}
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
