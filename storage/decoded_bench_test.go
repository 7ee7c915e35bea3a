package storage

import (
	"testing"

	"github.com/kapi-dev/kapi/internal/benchobj"
)

// BenchmarkDecodeMap decodes a stored object as Object.Map does the first
// time a state is read (int64/float64 numbers).
func BenchmarkDecodeMap(b *testing.B) {
	for _, s := range []struct {
		name string
		size int
	}{{"2KiB", 2 << 10}, {"100KiB", 100 << 10}} {
		value := benchobj.JSON(s.size)
		b.Run(s.name, func(b *testing.B) {
			b.SetBytes(int64(len(value)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decodeMap(value, 7); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
