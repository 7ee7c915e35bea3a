package registry

import (
	"testing"

	"github.com/kapi-dev/kapi/internal/benchobj"
)

// benchSizes are the object sizes of the decode and write benchmarks.
var benchSizes = []struct {
	name string
	size int
}{{"2KiB", 2 << 10}, {"100KiB", 100 << 10}}

// BenchmarkDecodeObject decodes a body as every JSON write does: the
// object, and the duplicate fields under fieldValidation=Warn.
func BenchmarkDecodeObject(b *testing.B) {
	for _, s := range benchSizes {
		body := benchobj.JSON(s.size)
		b.Run(s.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := decodeWithDuplicates(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// decodeWithDuplicates is readObject's decode of a JSON body. (To
// measure the encoding/json path, build the tests of commit 779b1b1 with
// this file, decodeWithDuplicates being decodeObject then
// duplicateFields there; BENCHMARKS.md has the commands.)
func decodeWithDuplicates(body []byte) (Object, []string, error) {
	return decodeJSON(body, true)
}
