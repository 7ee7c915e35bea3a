package durable

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The marker (MarkerName) holds the last revision known synced in
// pebble's log: Open refuses a database whose revision is below it.
// It is written in place after every commit's sync, before the commit's
// writers are answered, with no sync of its own (doc.go, "The marker"),
// in one of two slots, alternately, each in a sector of its own:
//
//	offset 0    slot 0: "kapi-rev" | revision (8 bytes big-endian) | CRC-32C of the 16 bytes before
//	offset 512  slot 1: the same
//
// The marker's revision is the larger of the valid slots: a write torn
// by a power loss spoils one slot at most (a disk writes a 512-byte
// sector whole or not at all, what databases' torn-page checks assume;
// a slot that is not whole fails its checksum), and the other holds
// the revision written before it. For example: slot 0 = 120, slot 1 = 121,
// the write of 122 to slot 0 torn → slot 0 invalid, the marker reads
// 121 (older: a weaker check, never a false alarm).
//
// A marker in the first format ("kapi-durable revision N\n", replaced
// atomically every 100 ms) is read too, and rewritten at Open.
const (
	markerSlot  = 512
	markerSize  = 2 * markerSlot
	markerMagic = "kapi-rev"
	// legacyMarkerPrefix is the first format's marker.
	legacyMarkerPrefix = "kapi-durable revision "
)

// markInterval is how often the marker is synced while writes go on.
const markInterval = 100 * time.Millisecond

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// markerRecord is one slot's content holding rev.
func markerRecord(rev uint64) []byte {
	b := binary.BigEndian.AppendUint64([]byte(markerMagic), rev)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// slotRevision reads one slot: its revision, or false when it is not a
// whole record.
func slotRevision(slot []byte) (uint64, bool) {
	const n = len(markerMagic) + 8
	if len(slot) < n+4 || string(slot[:len(markerMagic)]) != markerMagic ||
		binary.BigEndian.Uint32(slot[n:]) != crc32.Checksum(slot[:n], castagnoli) {
		return 0, false
	}
	return binary.BigEndian.Uint64(slot[len(markerMagic):n]), true
}

// errNoMarker: the data directory has no marker.
var errNoMarker = errors.New("no marker")

// readMarker reads dir's marker (errNoMarker when there is none).
func readMarker(dir string) (uint64, error) {
	path := filepath.Join(dir, MarkerName)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, errNoMarker
	}
	if err != nil {
		return 0, &OpenError{Path: path, Err: ErrNotWritable, Cause: err}
	}
	if s, ok := strings.CutPrefix(string(b), legacyMarkerPrefix); ok {
		s, ok := strings.CutSuffix(s, "\n")
		if rev, err := strconv.ParseUint(s, 10, 64); ok && err == nil {
			return rev, nil
		}
	}
	if len(b) != markerSize {
		return 0, &OpenError{Path: path, Err: ErrCorrupt, Cause: fmt.Errorf("not a revision marker (%d bytes: %q)", len(b), b[:min(len(b), 32)])}
	}
	r0, ok0 := slotRevision(b[:markerSlot])
	r1, ok1 := slotRevision(b[markerSlot:])
	if !ok0 && !ok1 {
		return 0, &OpenError{Path: path, Err: ErrCorrupt, Cause: errors.New("both slots of the revision marker are damaged (if the database is known whole, remove the marker and Adopt the directory)")}
	}
	return max(r0, r1), nil
}

// writeMarker replaces dir's marker with one holding rev in both slots,
// atomically and synced (at Open, Restore and a store's creation; the
// commits write it in place: marker.write).
func writeMarker(dir string, rev uint64) error {
	b := make([]byte, markerSize)
	copy(b, markerRecord(rev))
	copy(b[markerSlot:], markerRecord(rev))
	return writeFileAtomic(filepath.Join(dir, MarkerName), func(f *os.File) error {
		_, err := f.Write(b)
		return err
	})
}

// marker is the open marker file, written in place by the commits.
type marker struct {
	f      *os.File
	next   int    // the slot the next write goes to (under disk.mu)
	wrote  uint64 // the revision last written (under disk.mu)
	synced uint64 // the revision last synced (markLoop, close)
}

// openMarker opens dir's marker, which holds rev in both slots
// (writeMarker), for writing in place.
func openMarker(dir string, rev uint64) (*marker, error) {
	f, err := os.OpenFile(filepath.Join(dir, MarkerName), os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	return &marker{f: f, wrote: rev, synced: rev}, nil
}

// write puts rev in the next slot: one pwrite into the page cache, no
// sync. A write that fails (an I/O error) leaves the marker behind and
// its slot to be written again: a marker behind narrows what Open
// detects, never what is kept. Callers hold disk.mu.
func (m *marker) write(rev uint64) {
	if _, err := m.f.WriteAt(markerRecord(rev), int64(m.next*markerSlot)); err == nil {
		m.next, m.wrote = 1-m.next, rev
	}
}

// sync syncs the marker up to rev (what write wrote). A marker that
// cannot be synced stays behind on the disk, as a failed write does.
func (m *marker) sync(rev uint64) {
	if rev > m.synced && m.f.Sync() == nil {
		m.synced = rev
	}
}
