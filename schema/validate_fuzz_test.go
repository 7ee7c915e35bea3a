package schema

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

var fuzzSchemas = []string{
	widgetSchema,
	`{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{"a":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"number","default":1}}}}}}`,
	`{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"string","nullable":true,"enum":["a",null],"default":"a"}},"e":{"type":"object","x-kubernetes-embedded-resource":true,"properties":{"x":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]}}}}}`,
}

// FuzzValidate feeds random JSON objects to Prune, ApplyDefaults and
// Validate against a few schemas: none may panic, and running them on
// two copies of the same input gives the same objects and errors.
func FuzzValidate(f *testing.F) {
	f.Add([]byte(`{"spec":{"replicas":3,"ports":[{"port":80},{"port":80}],"selector":{"a":"b"}}}`))
	f.Add([]byte(`{"spec":{"a":[1,1.0,null]},"m":{"k":null},"e":{"kind":"a_b","metadata":{"name":"x/y"}}}`))
	f.Add([]byte(`[1,"a",null,{"b":2.5e300}]`))
	var schemas []*Schema
	for _, src := range fuzzSchemas {
		s, err := Parse([]byte(src))
		if err != nil {
			f.Fatal(err)
		}
		schemas = append(schemas, s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, s := range schemas {
			var runs [2]struct {
				obj    any
				pruned []string
				errs   []FieldError
			}
			for i := range runs {
				d := json.NewDecoder(bytes.NewReader(b))
				d.UseNumber()
				var obj any
				if d.Decode(&obj) != nil {
					return
				}
				runs[i].pruned = s.Prune(obj)
				s.ApplyDefaults(obj)
				runs[i].errs = s.Validate(obj)
				runs[i].obj = obj
			}
			if !reflect.DeepEqual(runs[0], runs[1]) {
				t.Fatalf("not deterministic on %s:\n%#v\n%#v", b, runs[0], runs[1])
			}
		}
	})
}
