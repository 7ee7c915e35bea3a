package gojson

import (
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/schema"
)

// BenchmarkCheck is the cost Check adds to a built-in kind's write: a
// ConfigMap of 2 KiB that has no error (the walk of the decoded object
// alone), and one whose error is last in the document (the walk, then
// the ordered parse).
func BenchmarkCheck(b *testing.B) {
	var data strings.Builder
	for i := range 64 {
		if i > 0 {
			data.WriteString(",")
		}
		data.WriteString(`"key-` + strings.Repeat("x", 4) + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `":"` + strings.Repeat("v", 16) + `"`)
	}
	ok := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default","labels":{"app":"web","tier":"front"}},"data":{` + data.String() + `}}`)
	bad := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"default","labels":{"app":"web","tier":"front"}},"data":{` + data.String() + `},"immutable":"yes"}`)
	cm := schema.ConfigMap()
	for _, bc := range []struct {
		name string
		body []byte
	}{{"valid", ok}, {"error", bad}} {
		obj := decode(b, bc.body)
		text := func() ([]byte, error) { return bc.body, nil }
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.body)))
			for b.Loop() {
				_ = Check(cm, obj, text)
			}
		})
	}
}
