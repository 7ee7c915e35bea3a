package durable

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble"
)

// TestScanParts: the parallel read of a key space returns what one
// iterator reads, in the same order, for any number of parts; the parts
// are cut at ascending keys inside the key space, and a database of
// several tables is cut into as many parts as asked.
func TestScanParts(t *testing.T) {
	// Small tables (64 KiB), so that a few thousand keys make many.
	db, err := pebble.Open(t.TempDir(), &pebble.Options{
		Levels: []pebble.LevelOptions{{TargetFileSize: 64 << 10, BlockSize: 4 << 10}},
		Logger: engineLog{},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const n = 3000
	rnd := rand.New(rand.NewPCG(1, 2)) // values that do not compress
	value := make([]byte, 200)
	for _, prefix := range []byte{prefixLog, 'm', prefixState} {
		b := db.NewBatch()
		for i := range n {
			for j := range value {
				value[j] = byte(rnd.Uint32())
			}
			b.Set(fmt.Appendf([]byte{prefix}, "%06d", i), value, nil)
		}
		if err := b.Commit(pebble.NoSync); err != nil {
			t.Fatal(err)
		}
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Compact([]byte{0}, []byte{0xff}, true); err != nil {
		t.Fatal(err)
	}
	tables := 0
	levels, _ := db.SSTables()
	for _, l := range levels {
		tables += len(l)
	}
	if tables < 8 {
		t.Fatalf("%d tables; the test needs several", tables)
	}
	key := func(_ *interner, k, _ []byte) ([]byte, error) { return bytes.Clone(k), nil }
	for _, prefix := range []byte{prefixState, prefixLog} {
		var want [][]byte
		scan(db, prefix, func(k, _ []byte) error { want = append(want, bytes.Clone(k)); return nil })
		if len(want) != n {
			t.Fatalf("%c: %d keys read by one iterator; want %d", prefix, len(want), n)
		}
		for _, parts := range []int{1, 2, 3, 8} {
			t.Run(fmt.Sprintf("%c/parts=%d", prefix, parts), func(t *testing.T) {
				splits := splitKeys(db, prefix, parts)
				if parts > 1 && len(splits) == 0 {
					t.Fatalf("no cut for %d parts", parts)
				}
				last := []byte{prefix}
				for _, s := range splits {
					if bytes.Compare(s, last) <= 0 || s[0] != prefix {
						t.Fatalf("cuts %q: not ascending inside key space %c", splits, prefix)
					}
					last = s
				}
				if len(splits) > parts-1 {
					t.Fatalf("%d cuts for %d parts", len(splits), parts)
				}
				got, err := scanPartsOf(db, prefix, parts, key)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.EqualFunc(got, want, bytes.Equal) {
					t.Fatalf("%d keys read in %d parts, not the %d one iterator reads in order", len(got), parts, len(want))
				}
			})
		}
	}
	// A value that does not decode, in the last part, fails the read.
	bad := errors.New("bad value")
	_, err = scanPartsOf(db, prefixState, 2, func(_ *interner, k, _ []byte) ([]byte, error) {
		if string(k) == fmt.Sprintf("%06d", n-1) {
			return nil, bad
		}
		return k, nil
	})
	if !errors.Is(err, bad) {
		t.Fatalf("scanPartsOf with a bad value: %v; want its error", err)
	}
}
