package gojson

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/kapi-dev/kapi/schema"
)

// FuzzCheck holds Check to never panicking, and to agreeing with itself:
// an error found in the decoded object is found in the ordered document,
// and a body without one has none either way.
func FuzzCheck(f *testing.F) {
	for _, b := range []string{
		`{"metadata":{"name":"a","labels":{"x":1}},"data":{"k":[]}}`,
		`{"binaryData":{"k":"%%%"},"immutable":"x"}`,
		`{"rules":[{"verbs":[1],"apiGroups":{}}]}`,
		`{"metadata":null}`,
	} {
		f.Add([]byte(b))
	}
	cm, role := schema.ConfigMap(), schema.Role()
	f.Fuzz(func(t *testing.T, b []byte) {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var obj any
		if d.Decode(&obj) != nil {
			return
		}
		for _, s := range []*schema.Schema{cm, role} {
			var fast checker
			fast.value(s, obj, context{})
			err := Check(s, obj, func() ([]byte, error) { return b, nil })
			if (fast.err == nil) != (err == nil) {
				t.Fatalf("%s: decoded object's error %v, document's %v", b, fast.err, err)
			}
			_ = FromUnstructured(s, obj) // the converter's rules: no panic on any value
			_ = Sprint(obj)
		}
	})
}
