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
// objects of 2 KiB, taken while it is open (what a crash of the process
// leaves: the writes in pebble's log, the marker as the commits wrote
// it), and checks that the marker is at the last acknowledged write.
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
	image := t.TempDir()
	copyTree(t, dir, image)
	s.Close()
	if marked, err := durable.ReadMarker(image); err != nil || marked != rev {
		t.Fatalf("crash image: marker at %d (%v); want the last acknowledged write's revision, %d", marked, err, rev)
	}
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
		{"marker lost", false, func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, durable.MarkerName))
		}},
		{"marker lost after a crash", true, func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, durable.MarkerName))
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

// TestDamageAboveMarker: pebble reads a torn tail of its last log as
// the end (what a crash mid-append leaves), so a log cut short reads as
// a shorter history; the marker tells the two apart. After a crash of
// the process the marker holds the last acknowledged write's revision
// (every commit writes it, before answering, into the page cache, which
// outlives the process), so the last log cut anywhere among its records
// is refused at Open: ErrCorrupt, the directory left as it was. After a
// power loss the marker on disk may be older, by its last sync (every
// 100 ms): an older marker never refuses a whole log (no false alarm),
// and a log cut above it still opens, as a prefix of the history, never
// with a gap or half a write: the damage the marker cannot tell. Here
// the marker is set back to revision 2 for that case, and the last log
// cut at each tenth of its length.
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
	type damage struct {
		name   string
		marker uint64  // 0: as the commits left it (a crash of the process)
		cut    float64 // the part of the last log's length kept; 1: whole
	}
	tests := []damage{
		{"crash, log whole", 0, 1},
		{"power loss, marker behind, log whole", 2, 1},
	}
	for tenth := 1; tenth < 10; tenth++ {
		tests = append(tests,
			damage{fmt.Sprintf("crash, log cut at %d0%%", tenth), 0, float64(tenth) / 10},
			damage{fmt.Sprintf("power loss, marker behind, log cut at %d0%%", tenth), 2, float64(tenth) / 10})
	}
	lost := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			copyTree(t, image, dir)
			if tt.marker != 0 {
				if err := durable.WriteMarker(dir, tt.marker); err != nil {
					t.Fatal(err)
				}
			}
			if tt.cut < 1 {
				truncateBy(t, filepath.Join(dir, last), tt.cut)
			}
			if tt.marker == 0 && tt.cut < 1 {
				before := snapshot(t, dir)
				s, err := durable.Open(dir, durable.Options{})
				if err == nil {
					s.Close()
					t.Fatal("Open succeeded with the log cut below the last acknowledged write; want ErrCorrupt")
				}
				var oe *durable.OpenError
				if !errors.Is(err, durable.ErrCorrupt) || !errors.As(err, &oe) || !strings.Contains(err.Error(), fmt.Sprintf("revision %d was committed", n+1)) {
					t.Fatalf("Open: %v; want an *OpenError wrapping ErrCorrupt naming revision %d", err, n+1)
				}
				if after := snapshot(t, dir); !maps.Equal(before, after) {
					t.Fatal("Open changed the damaged directory")
				}
				t.Log(err)
				return
			}
			s := open(t, dir, durable.Options{})
			rev, _ := s.Revision(t.Context())
			res, err := s.List(t.Context(), "/", storage.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// Revision r holds the (r-1)th create: /k/0000 is revision 2.
			if rev < 2 || rev > n+1 || len(res.Items) != int(rev)-1 || (tt.cut == 1 && rev != n+1) {
				t.Fatalf("opened at revision %d with %d objects; want a prefix of the %d creates, at revision 2 or more (all of them, the log whole)", rev, len(res.Items), n)
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
			durable.WriteMarker(dir, 2)
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

// TestMarkerLost: a database whose marker is missing is refused at Open
// (ErrCorrupt, naming the ways out), since without the marker a log cut
// short reads as a crash: a lost marker must not turn into a silent
// loss. Restore writes the marker; Adopt takes a database known whole as
// it is, after checking that it reads whole, and refuses a directory
// that has its marker or a database that does not read.
func TestMarkerLost(t *testing.T) {
	tests := []struct {
		name     string
		dir      func(t *testing.T) string
		lost     bool  // a database without its marker: Open refuses it
		adoptErr error // nil: Adopt succeeds and Open then serves the 200 objects
	}{
		{"closed store, marker lost", func(t *testing.T) string {
			dir := filled(t, 200)
			os.Remove(filepath.Join(dir, durable.MarkerName))
			return dir
		}, true, nil},
		{"crash image, marker lost", func(t *testing.T) string {
			dir := crashImage(t, 200)
			os.Remove(filepath.Join(dir, durable.MarkerName))
			return dir
		}, true, nil},
		{"marker in place", func(t *testing.T) string { return filled(t, 200) }, false, durable.ErrDataExists},
		{"no database", func(t *testing.T) string { return t.TempDir() }, false, durable.ErrCorrupt},
		{"table truncated, marker lost", func(t *testing.T) string {
			dir := filled(t, 200)
			os.Remove(filepath.Join(dir, durable.MarkerName))
			truncateBy(t, engineFile(t, dir, "*.sst"), 0.5)
			return dir
		}, true, durable.ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.dir(t)
			before := snapshot(t, dir)
			if tt.lost {
				s, err := durable.Open(dir, durable.Options{})
				if err == nil {
					s.Close()
				}
				if !errors.Is(err, durable.ErrCorrupt) || !strings.Contains(err.Error(), "marker is missing") {
					t.Fatalf("Open without a marker: %v; want ErrCorrupt (marker missing)", err)
				}
				if after := snapshot(t, dir); !maps.Equal(before, after) {
					t.Fatal("Open changed the directory whose marker is missing")
				}
			}
			err := durable.Adopt(dir)
			if tt.adoptErr != nil {
				if !errors.Is(err, tt.adoptErr) {
					t.Fatalf("Adopt: %v; want %v", err, tt.adoptErr)
				}
				if after := snapshot(t, dir); !maps.Equal(before, after) {
					t.Fatal("a refused Adopt changed the directory")
				}
				return
			}
			if err != nil {
				t.Fatalf("Adopt: %v", err)
			}
			if rev, err := durable.ReadMarker(dir); err != nil || rev != 201 {
				t.Fatalf("after Adopt the marker is at %d (%v); want 201", rev, err)
			}
			s := open(t, dir, durable.Options{})
			res, err := s.List(t.Context(), "/", storage.ListOptions{})
			if err != nil || len(res.Items) != 200 || res.Revision != 201 {
				t.Fatalf("after Adopt: %d objects at %d, %v; want 200 at 201", len(res.Items), res.Revision, err)
			}
		})
	}
}

// TestOpenMarkers: the markers Open accepts beside a database: one of
// the first format (a text line, replaced every 100 ms) at or below the
// database's revision, rewritten in the current format; one at the
// initial revision with no database (a store whose creation stopped
// before its database was in place: nothing was committed), made anew.
func TestOpenMarkers(t *testing.T) {
	tests := []struct {
		name    string
		dir     func(t *testing.T) string
		want    uint64 // the revision Open serves
		corrupt bool
	}{
		{"first format, at the database's revision", func(t *testing.T) string {
			dir := filled(t, 20)
			os.WriteFile(filepath.Join(dir, durable.MarkerName), []byte("kapi-durable revision 21\n"), 0o600)
			return dir
		}, 21, false},
		{"first format, behind", func(t *testing.T) string {
			dir := filled(t, 20)
			os.WriteFile(filepath.Join(dir, durable.MarkerName), []byte("kapi-durable revision 7\n"), 0o600)
			return dir
		}, 21, false},
		{"first format, ahead of the database", func(t *testing.T) string {
			dir := filled(t, 20)
			os.WriteFile(filepath.Join(dir, durable.MarkerName), []byte("kapi-durable revision 22\n"), 0o600)
			return dir
		}, 0, true},
		{"initial revision, no database", func(t *testing.T) string {
			dir := t.TempDir()
			durable.WriteMarker(dir, 1)
			os.MkdirAll(filepath.Join(dir, durable.DirName+".init"), 0o700) // what the interrupted creation left
			return dir
		}, 1, false},
		{"revision 2, no database", func(t *testing.T) string {
			dir := t.TempDir()
			durable.WriteMarker(dir, 2)
			return dir
		}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.dir(t)
			s, err := durable.Open(dir, durable.Options{})
			if tt.corrupt {
				if err == nil {
					s.Close()
				}
				if !errors.Is(err, durable.ErrCorrupt) {
					t.Fatalf("Open: %v; want ErrCorrupt", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer s.Close()
			rev, _ := s.Revision(t.Context())
			fi, serr := os.Stat(filepath.Join(dir, durable.MarkerName))
			marked, merr := durable.ReadMarker(dir)
			if rev != tt.want || serr != nil || fi.Size() != 1024 || merr != nil || marked != rev {
				t.Fatalf("opened at %d; marker %d (%v, %v); want %d, the marker rewritten (1024 bytes) at it", rev, marked, merr, serr, tt.want)
			}
		})
	}
}

// TestMarkerBeforeAnswer: a write is answered only once the marker holds
// its revision (what a crash of the process leaves in the page cache),
// with writers at once sharing commits: each writer reads the marker
// as soon as its write returns.
func TestMarkerBeforeAnswer(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, durable.Options{})
	const writers, writes = 8, 40
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			for i := range writes {
				o, err := s.Create(t.Context(), obj(fmt.Sprintf("/k/%d/%d", w, i), "v"))
				if err == nil {
					var marked uint64
					if marked, err = durable.ReadMarker(dir); err == nil && marked < o.Revision {
						err = fmt.Errorf("write at revision %d answered with the marker at %d", o.Revision, marked)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
