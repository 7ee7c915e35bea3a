package schema

import (
	"reflect"
	"slices"
	"testing"
)

// ratchetSchema has a field of each kind of correlation: object
// properties, additionalProperties values, list-type map, set and atomic
// lists, an anyOf, and a status.
const ratchetSchema = `{"type":"object","properties":{
 "kind":{"type":"string","maxLength":3},
 "spec":{"type":"object","required":["size"],"properties":{
  "size":{"type":"string","enum":["s","m"]},
  "name":{"type":"string","maxLength":3},
  "other":{"type":"string"},
  "n":{"type":"integer","maximum":5},
  "labels":{"type":"object","additionalProperties":{"type":"string","maxLength":2}},
  "byKey":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"],"maxItems":2,
   "items":{"type":"object","required":["k"],"properties":{"k":{"type":"string"},"v":{"type":"string","maxLength":2}}}},
  "byTwo":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["a","b"],
   "items":{"type":"object","required":["a","b"],"properties":{"a":{"type":"integer"},"b":{"type":"string"},"v":{"type":"string","maxLength":2}}}},
  "set":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string","maxLength":2}},
  "atomic":{"type":"array","items":{"type":"string","maxLength":2}},
  "choice":{"type":"object","properties":{"x":{"type":"string"},"y":{"type":"string"}},
   "anyOf":[{"required":["x"],"properties":{"x":{"maxLength":1}}},{"required":["y"],"properties":{"y":{"maxLength":1}}}]},
  "free":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{"p":{"type":"string","maxLength":2}}}}},
 "status":{"type":"object","properties":{"phase":{"type":"string","enum":["ok"]},"count":{"type":"integer","minimum":0}}}}}`

// sameErrors is reflect.DeepEqual, but for a nil and an empty list.
func sameErrors(a, b []FieldError) bool {
	return len(a) == 0 && len(b) == 0 || reflect.DeepEqual(a, b)
}

func fields(errs []FieldError) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field+" "+e.Type)
	}
	slices.Sort(out)
	return out
}

func TestValidateUpdate(t *testing.T) {
	s, err := Parse([]byte(ratchetSchema))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		old, obj string
		want     []string // "field type", sorted
	}{
		{name: "unchanged invalid field, other field changed",
			old: `{"spec":{"size":"s","name":"long","other":"a"}}`, obj: `{"spec":{"size":"s","name":"long","other":"b"}}`},
		{name: "invalid field changed to another invalid value",
			old: `{"spec":{"size":"s","name":"long"}}`, obj: `{"spec":{"size":"s","name":"longer"}}`,
			want: []string{"spec.name FieldValueTooLong"}},
		{name: "valid field made invalid",
			old: `{"spec":{"size":"s","name":"ok"}}`, obj: `{"spec":{"size":"s","name":"long"}}`,
			want: []string{"spec.name FieldValueTooLong"}},
		{name: "integer and float differ",
			old: `{"spec":{"size":"s","n":7}}`, obj: `{"spec":{"size":"s","n":7.0}}`,
			want: []string{"spec.n FieldValueInvalid"}},
		{name: "json.Number and int64 are the same integer",
			old: `{"spec":{"size":"s","n":7}}`, obj: `{"spec":{"size":"s","n":7}}`},
		{name: "missing required field, parent unchanged",
			old: `{"spec":{"other":"a"},"status":{"phase":"x"}}`, obj: `{"spec":{"other":"a"},"status":{"phase":"ok"}}`},
		{name: "missing required field, parent changed",
			old: `{"spec":{"other":"a"}}`, obj: `{"spec":{"other":"b"}}`,
			want: []string{"spec.size FieldValueRequired"}},
		{name: "map value unchanged, another value changed",
			old: `{"spec":{"size":"s","labels":{"a":"long","b":"x"}}}`, obj: `{"spec":{"size":"s","labels":{"a":"long","b":"y"}}}`},
		{name: "map value added invalid",
			old: `{"spec":{"size":"s","labels":{"a":"long"}}}`, obj: `{"spec":{"size":"s","labels":{"a":"long","c":"long"}}}`,
			want: []string{"spec.labels.c FieldValueTooLong"}},
		{name: "list-map items correlate by key, whatever their order",
			old: `{"spec":{"size":"s","byKey":[{"k":"a","v":"long"},{"k":"b","v":"x"}]}}`,
			obj: `{"spec":{"size":"s","byKey":[{"k":"b","v":"y"},{"k":"a","v":"long"}]}}`},
		{name: "list-map item changed",
			old:  `{"spec":{"size":"s","byKey":[{"k":"a","v":"long"}]}}`,
			obj:  `{"spec":{"size":"s","byKey":[{"k":"a","v":"longer"}]}}`,
			want: []string{"spec.byKey[0].v FieldValueTooLong"}},
		{name: "list-map maxItems ratchets on a reordered list",
			old: `{"spec":{"size":"s","byKey":[{"k":"a"},{"k":"b"},{"k":"c"}]}}`,
			obj: `{"spec":{"size":"s","byKey":[{"k":"c"},{"k":"a"},{"k":"b"}]}}`},
		{name: "list-map grown past maxItems",
			old:  `{"spec":{"size":"s","byKey":[{"k":"a"},{"k":"b"},{"k":"c"}]}}`,
			obj:  `{"spec":{"size":"s","byKey":[{"k":"a"},{"k":"b"},{"k":"c"},{"k":"d"}]}}`,
			want: []string{"spec.byKey FieldValueTooMany"}},
		{name: "list-map with two keys",
			old: `{"spec":{"size":"s","byTwo":[{"a":1,"b":"x","v":"long"},{"a":2,"b":"x"}]}}`,
			obj: `{"spec":{"size":"s","byTwo":[{"a":2,"b":"x","v":"z"},{"a":1,"b":"x","v":"long"}]}}`},
		{name: "list-map key of another type does not correlate",
			old:  `{"spec":{"size":"s","byTwo":[{"a":1,"b":"x","v":"long"}]}}`,
			obj:  `{"spec":{"size":"s","byTwo":[{"a":1.5,"b":"x","v":"long"}]}}`,
			want: []string{"<nil> FieldValueInvalid", "spec.byTwo[0].a FieldValueTypeInvalid", "spec.byTwo[0].v FieldValueTooLong"}},
		{name: "set items are not correlated",
			old: `{"spec":{"size":"s","set":["long","a"]}}`, obj: `{"spec":{"size":"s","set":["long","b"]}}`,
			want: []string{"spec.set[0] FieldValueTooLong"}},
		{name: "unchanged set",
			old: `{"spec":{"size":"s","set":["long","a"]},"status":{}}`, obj: `{"spec":{"size":"s","set":["long","a"]}}`},
		{name: "atomic items are not correlated",
			old: `{"spec":{"size":"s","atomic":["long","a"]}}`, obj: `{"spec":{"size":"s","atomic":["long","a","b"]}}`,
			want: []string{"spec.atomic[0] FieldValueTooLong"}},
		{name: "anyOf unchanged",
			old: `{"spec":{"size":"s","choice":{"x":"long"}},"status":{}}`, obj: `{"spec":{"size":"s","choice":{"x":"long"}}}`},
		{name: "anyOf branches are not ratcheted",
			old: `{"spec":{"size":"s","choice":{"x":"long"}}}`, obj: `{"spec":{"size":"s","choice":{"x":"long","y":"long"}}}`,
			want: []string{"<nil> FieldValueInvalid", "spec.choice.x FieldValueTooLong"}},
		{name: "an unknown field keeps its object from being unchanged",
			old: `{"spec":{"size":"s","free":{"p":"long","q":1}}}`, obj: `{"spec":{"size":"s","free":{"p":"long","q":1}},"status":{}}`},
		{name: "root kind is not ratcheted",
			old: `{"kind":"Long","spec":{"size":"s"}}`, obj: `{"kind":"Long","spec":{"size":"m"}}`,
			want: []string{"kind FieldValueTooLong"}},
		{name: "set duplicates in old are not reported",
			old: `{"spec":{"size":"s","set":["a","a"]}}`, obj: `{"spec":{"size":"s","set":["b","b"]}}`},
		{name: "set duplicates new",
			old: `{"spec":{"size":"s","set":["a"]}}`, obj: `{"spec":{"size":"s","set":["b","b"]}}`,
			want: []string{"spec.set[1] FieldValueDuplicate"}},
		{name: "no old object",
			old: `null`, obj: `{"spec":{"size":"s","name":"long"}}`,
			want: []string{"spec.name FieldValueTooLong"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			obj, old := decodeJSON(t, []byte(tt.obj)), decodeJSON(t, []byte(tt.old))
			errs := s.ValidateUpdate(obj, old)
			if got := fields(errs); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q; want %q", got, tt.want)
			}
			if full := s.validateUpdate(obj, old, true); !sameErrors(errs, full) {
				t.Errorf("got %v; checking unchanged values too: %v", errs, full)
			}
		})
	}
}

func TestValidateStatusUpdate(t *testing.T) {
	s, err := Parse([]byte(ratchetSchema))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		old, obj string
		want     []string // "field: message"
	}{
		{name: "spec errors are not checked",
			old: `{"spec":{"name":"long"},"status":{"phase":"ok"}}`, obj: `{"spec":{"name":"long"},"status":{"phase":"ok","count":1}}`},
		{name: "unchanged invalid status field",
			old: `{"status":{"phase":"bad"}}`, obj: `{"status":{"phase":"bad","count":1}}`},
		{name: "changed invalid status field, named below status",
			old: `{"status":{"phase":"bad"}}`, obj: `{"status":{"phase":"worse","count":-1}}`,
			want: []string{`status.count: Invalid value: -1: count in body should be greater than or equal to 0`, `status.phase: Unsupported value: "worse": supported values: "ok"`}},
		{name: "status of the wrong type",
			old: `{}`, obj: `{"status":"x"}`,
			want: []string{`status: Invalid value: "string":  in body must be of type object: "string"`}},
		{name: "no status",
			old: `{"status":{"phase":"bad"}}`, obj: `{"spec":{"name":"long"}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			obj := decodeJSON(t, []byte(tt.obj)).(map[string]any)
			old := decodeJSON(t, []byte(tt.old)).(map[string]any)
			var got []string
			for _, e := range s.ValidateStatusUpdate(obj, old) {
				got = append(got, e.Error())
			}
			slices.Sort(got)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q; want %q", got, tt.want)
			}
		})
	}
}
