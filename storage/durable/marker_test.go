package durable

import (
	"archive/tar"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzMarker: any marker file is read as a revision or refused with
// ErrCorrupt, never a panic; a marker written is read back, and so is
// each revision a commit writes in place after it.
func FuzzMarker(f *testing.F) {
	whole := markerFile(markerRecord(41), markerRecord(42))
	for _, b := range [][]byte{whole, whole[:markerSlot+7], []byte("kapi-durable revision 42\n"), []byte("kapi-durable revision \n"), {}, []byte("garbage")} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, MarkerName), b, 0o600); err != nil {
			t.Fatal(err)
		}
		rev, err := readMarker(dir)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("readMarker(%q): %v; want ErrCorrupt", b, err)
			}
			return
		}
		if err := writeMarker(dir, rev); err != nil {
			t.Fatal(err)
		}
		m, err := openMarker(dir, rev)
		if err != nil {
			t.Fatal(err)
		}
		defer m.f.Close()
		for _, next := range []uint64{rev, rev + 1, rev + 2} {
			if next < rev { // rev+1 overflowed
				break
			}
			m.write(next)
			if again, err := readMarker(dir); err != nil || again != next {
				t.Fatalf("marker %d written, read back %d, %v", next, again, err)
			}
		}
	})
}

// markerFile is a marker holding slot0 and slot1.
func markerFile(slot0, slot1 []byte) []byte {
	b := make([]byte, markerSize)
	copy(b, slot0)
	copy(b[markerSlot:], slot1)
	return b
}

// TestMarker: what readMarker makes of marker files: the larger
// revision of the slots whose record is whole, so that a write torn in
// one slot leaves the revision before it.
func TestMarker(t *testing.T) {
	torn := markerRecord(122)
	torn[10] ^= 0xff // a byte of the revision changed: its checksum fails
	tests := []struct {
		name    string
		content []byte // nil: no marker
		want    uint64
		err     error
	}{
		{"none", nil, 0, errNoMarker},
		{"both slots", markerFile(markerRecord(120), markerRecord(121)), 121, nil},
		{"slot 0 ahead", markerFile(markerRecord(122), markerRecord(121)), 122, nil},
		{"slot 0 torn", markerFile(torn, markerRecord(121)), 121, nil},
		{"slot 1 torn", markerFile(markerRecord(120), torn), 120, nil},
		{"slot 1 never written", markerFile(markerRecord(120), nil), 120, nil},
		{"both torn", markerFile(torn, torn), 0, ErrCorrupt},
		{"cut short", markerFile(markerRecord(120), markerRecord(121))[:markerSlot+20], 0, ErrCorrupt},
		{"empty", []byte{}, 0, ErrCorrupt},
		{"first format", []byte("kapi-durable revision 120\n"), 120, nil},
		{"first format, no newline", []byte("kapi-durable revision 120"), 0, ErrCorrupt},
		{"first format, not a number", []byte("kapi-durable revision x\n"), 0, ErrCorrupt},
		{"other file", []byte("garbage"), 0, ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.content != nil {
				os.WriteFile(filepath.Join(dir, MarkerName), tt.content, 0o600)
			}
			rev, err := readMarker(dir)
			if !errors.Is(err, tt.err) || (tt.err == nil && rev != tt.want) {
				t.Fatalf("readMarker: %d, %v; want %d, %v", rev, err, tt.want, tt.err)
			}
		})
	}
}

// TestMarkerAlternates: a commit's write goes to the slot the write
// before it did not use, so that tearing it leaves that one; the file
// never changes size.
func TestMarkerAlternates(t *testing.T) {
	dir := t.TempDir()
	if err := writeMarker(dir, 5); err != nil {
		t.Fatal(err)
	}
	m, err := openMarker(dir, 5)
	if err != nil {
		t.Fatal(err)
	}
	defer m.f.Close()
	path := filepath.Join(dir, MarkerName)
	last := -1
	for rev := uint64(6); rev < 10; rev++ {
		before, _ := os.ReadFile(path)
		m.write(rev)
		after, _ := os.ReadFile(path)
		if len(after) != markerSize {
			t.Fatalf("after writing %d the marker has %d bytes; want %d", rev, len(after), markerSize)
		}
		changed := []bool{!bytes.Equal(before[:markerSlot], after[:markerSlot]), !bytes.Equal(before[markerSlot:], after[markerSlot:])}
		if changed[0] == changed[1] {
			t.Fatalf("writing %d changed slots %v; want exactly one", rev, changed)
		}
		written := 0
		if changed[1] {
			written = 1
		}
		if written == last {
			t.Fatalf("writing %d used slot %d again", rev, written)
		}
		last = written
		// Tear the write just made: the marker reads the revision before.
		torn := bytes.Clone(after)
		torn[written*markerSlot+12] ^= 0xff
		os.WriteFile(path, torn, 0o600)
		if got, err := readMarker(dir); err != nil || got != rev-1 {
			t.Fatalf("the write of %d torn: marker %d, %v; want %d", rev, got, err, rev-1)
		}
		os.WriteFile(path, after, 0o600)
		if got, err := readMarker(dir); err != nil || got != rev {
			t.Fatalf("marker %d, %v after writing %d", got, err, rev)
		}
	}
}

// FuzzUnpack: any stream given to Restore's unpacking is written out as
// plain files inside its directory or refused, never a panic or a file
// outside it, and accepted only with the end entry.
func FuzzUnpack(f *testing.F) {
	var whole bytes.Buffer
	tw := tar.NewWriter(&whole)
	tw.WriteHeader(&tar.Header{Name: "MANIFEST-000001", Mode: 0o600, Size: 3, Typeflag: tar.TypeReg})
	tw.Write([]byte("abc"))
	tw.WriteHeader(&tar.Header{Name: backupEnd, Mode: 0o600, Typeflag: tar.TypeReg})
	tw.Close()
	f.Add(whole.Bytes())
	f.Add(whole.Bytes()[:700])
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, b []byte) {
		root := t.TempDir()
		dir := filepath.Join(root, "db")
		os.Mkdir(dir, 0o700)
		err := unpack(bytes.NewReader(b), dir)
		entries, _ := os.ReadDir(root)
		if len(entries) != 1 {
			t.Fatalf("unpack wrote outside its directory: %v", entries)
		}
		if err == nil && !bytes.Contains(b, []byte(backupEnd)) {
			t.Fatal("unpack accepted a stream without the end entry")
		}
	})
}
