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
// ErrCorrupt, never a panic; a marker written is read back.
func FuzzMarker(f *testing.F) {
	for _, s := range []string{"kapi-durable revision 42\n", "kapi-durable revision \n", "kapi-durable revision 18446744073709551616\n", "", "garbage"} {
		f.Add([]byte(s))
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
		if again, err := readMarker(dir); err != nil || again != rev {
			t.Fatalf("marker %d written, read back %d, %v", rev, again, err)
		}
	})
}

// TestMarker: what readMarker makes of marker files.
func TestMarker(t *testing.T) {
	tests := []struct {
		name    string
		content *string // nil: no marker
		want    uint64
		corrupt bool
	}{
		{"none", nil, 0, false},
		{"revision", ptr("kapi-durable revision 120\n"), 120, false},
		{"no newline", ptr("kapi-durable revision 120"), 0, true},
		{"not a number", ptr("kapi-durable revision x\n"), 0, true},
		{"other file", ptr("garbage"), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.content != nil {
				os.WriteFile(filepath.Join(dir, MarkerName), []byte(*tt.content), 0o600)
			}
			rev, err := readMarker(dir)
			if tt.corrupt != errors.Is(err, ErrCorrupt) || (!tt.corrupt && (err != nil || rev != tt.want)) {
				t.Fatalf("readMarker: %d, %v; want %d (corrupt: %v)", rev, err, tt.want, tt.corrupt)
			}
		})
	}
}

func ptr(s string) *string { return &s }

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
