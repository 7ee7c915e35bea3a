package schema

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/kapi-dev/kapi/internal/validation"
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

// FuzzValidateUpdate feeds random pairs of JSON values to ValidateUpdate
// and ValidateStatusUpdate: none may panic; ratcheting only takes errors
// away, so every error of ValidateUpdate(obj, old) is one of
// Validate(obj); with no old object it reports exactly what Validate
// does; skipping unchanged values changes nothing; and an unchanged
// object reports no duplicate list items.
func FuzzValidateUpdate(f *testing.F) {
	f.Add([]byte(`{"spec":{"replicas":3,"ports":[{"port":80},{"port":80}]}}`), []byte(`{"spec":{"replicas":"x","ports":[{"port":80}]}}`))
	f.Add([]byte(`{"spec":{"a":[1,1.0,null]},"m":{"k":null},"e":{"kind":"a_b"}}`), []byte(`{"spec":{"a":[1,1]},"m":{"k":"b"}}`))
	f.Add([]byte(`{"status":{"x":1},"spec":{"name":"long"}}`), []byte(`{"status":[1]}`))
	var schemas []*Schema
	for _, src := range append(fuzzSchemas, ratchetSchema) {
		s, err := Parse([]byte(src))
		if err != nil {
			f.Fatal(err)
		}
		schemas = append(schemas, s)
	}
	decode := func(b []byte) (any, bool) {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var v any
		return v, d.Decode(&v) == nil
	}
	f.Fuzz(func(t *testing.T, nb, ob []byte) {
		obj, ok1 := decode(nb)
		old, ok2 := decode(ob)
		same, _ := decode(nb)
		if !ok1 || !ok2 {
			return
		}
		for _, s := range schemas {
			all := s.Validate(obj)
			if got := s.ValidateUpdate(obj, nil); !reflect.DeepEqual(got, all) {
				t.Fatalf("ValidateUpdate(%s, nil) = %v; Validate = %v", nb, got, all)
			}
			errs := s.ValidateUpdate(obj, old)
			if full := s.validateUpdate(obj, old, true); !sameErrors(errs, full) {
				t.Fatalf("ValidateUpdate(%s, %s) = %v; checking unchanged values too: %v", nb, ob, errs, full)
			}
			for _, e := range errs {
				if !slices.ContainsFunc(all, func(a FieldError) bool { return reflect.DeepEqual(a, e) }) {
					t.Fatalf("ValidateUpdate(%s, %s) reports %v, which Validate does not: %v", nb, ob, e, all)
				}
			}
			for _, e := range s.ValidateUpdate(obj, same) {
				if e.Type == validation.TypeDuplicate {
					t.Fatalf("ValidateUpdate(%s, itself) reports duplicate %v", nb, e)
				}
			}
			om, ok1 := old.(map[string]any)
			nm, ok2 := obj.(map[string]any)
			if ok1 && ok2 {
				got, full := s.ValidateStatusUpdate(nm, om), s.validateStatusUpdate(nm, om, true)
				if !sameErrors(got, full) {
					t.Fatalf("ValidateStatusUpdate(%s, %s) = %v; checking unchanged values too: %v", nb, ob, got, full)
				}
			}
		}
	})
}
