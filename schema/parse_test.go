package schema

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want *Schema
	}{
		{"empty", `{}`, &Schema{}},
		{"scalar keywords", `{"type":"string","format":"date-time","title":"T","description":"d","nullable":true,"pattern":"^a$","minLength":1,"maxLength":3}`,
			&Schema{Type: "string", Format: "date-time", Title: "T", Description: "d", Nullable: true, Pattern: "^a$", MinLength: ptr[int64](1), MaxLength: ptr[int64](3)}},
		{"numbers", `{"type":"number","minimum":0.5,"maximum":10,"exclusiveMinimum":true,"exclusiveMaximum":true,"multipleOf":0.5}`,
			&Schema{Type: "number", Minimum: ptr(0.5), Maximum: ptr(10.0), ExclusiveMinimum: true, ExclusiveMaximum: true, MultipleOf: ptr(0.5)}},
		{"integer bound written as float", `{"type":"array","minItems":1.0,"maxItems":2,"uniqueItems":true}`,
			&Schema{Type: "array", MinItems: ptr[int64](1), MaxItems: ptr[int64](2), UniqueItems: true}},
		{"default enum example are json.Number", `{"type":"integer","default":3,"enum":[1,2,3],"example":2}`,
			&Schema{Type: "integer", Default: json.Number("3"), Enum: []any{json.Number("1"), json.Number("2"), json.Number("3")}, Example: json.Number("2")}},
		{"yaml flow style", `{type: string, enum: [a]}`, &Schema{Type: "string", Enum: []any{"a"}}},
		{"yaml", "type: object\nproperties:\n  a: {type: string}\nrequired: [a]\n",
			&Schema{Type: "object", Properties: map[string]*Schema{"a": {Type: "string"}}, Required: []string{"a"}}},
		{"empty lists are nil", `{"type":"object","properties":{},"required":[],"enum":[]}`, &Schema{Type: "object"}},
		{"additionalProperties schema", `{"type":"object","additionalProperties":{"type":"string"},"minProperties":1,"maxProperties":2}`,
			&Schema{Type: "object", AdditionalProperties: &Schema{Type: "string"}, MinProperties: ptr[int64](1), MaxProperties: ptr[int64](2)}},
		{"additionalProperties true", `{"type":"object","additionalProperties":true}`, &Schema{Type: "object", AdditionalProperties: &Schema{}}},
		{"additionalProperties false dropped", `{"type":"object","additionalProperties":false}`, &Schema{Type: "object"}},
		{"dropped keywords", `{"$schema":"x","externalDocs":{"url":"u"}}`, &Schema{}},
		{"int-or-string as kubebuilder writes it", `{"anyOf":[{"type":"integer"},{"type":"string"}],"x-kubernetes-int-or-string":true}`,
			&Schema{AnyOf: []*Schema{{Type: "integer"}, {Type: "string"}}, Ext: Ext{IntOrString: true}}},
		{"junctors", `{"allOf":[{"minLength":1}],"oneOf":[{"required":["a"]}],"not":{"required":["b"]}}`,
			&Schema{AllOf: []*Schema{{MinLength: ptr[int64](1)}}, OneOf: []*Schema{{Required: []string{"a"}}}, Not: &Schema{Required: []string{"b"}}}},
		{"extensions", `{"type":"object","x-kubernetes-preserve-unknown-fields":true,"x-kubernetes-embedded-resource":true,"x-kubernetes-map-type":"atomic","x-kubernetes-patch-strategy":"merge","x-kubernetes-patch-merge-key":"name"}`,
			&Schema{Type: "object", Ext: Ext{PreserveUnknownFields: true, EmbeddedResource: true, MapType: "atomic", PatchStrategy: "merge", PatchMergeKey: "name"}}},
		{"list map", `{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["port","protocol"],"items":{"type":"object","required":["port"],"properties":{"port":{"type":"integer"},"protocol":{"type":"string","default":"TCP"}}}}`,
			&Schema{Type: "array", Ext: Ext{ListType: "map", ListMapKeys: []string{"port", "protocol"}}, Items: &Schema{Type: "object", Required: []string{"port"},
				Properties: map[string]*Schema{"port": {Type: "integer"}, "protocol": {Type: "string", Default: "TCP"}}}}},
		{"list set of atomic objects", `{"type":"array","x-kubernetes-list-type":"set","items":{"type":"object","x-kubernetes-map-type":"atomic"}}`,
			&Schema{Type: "array", Ext: Ext{ListType: "set"}, Items: &Schema{Type: "object", Ext: Ext{MapType: "atomic"}}}},
		{"validations", `{"type":"object","x-kubernetes-validations":[{"rule":"self.a > 0","message":"m","messageExpression":"'x'","fieldPath":".a","reason":"FieldValueInvalid","optionalOldSelf":true}]}`,
			&Schema{Type: "object", Ext: Ext{Validations: []Rule{{Rule: "self.a > 0", Message: "m", MessageExpression: "'x'", FieldPath: ".a", Reason: "FieldValueInvalid", OptionalOldSelf: ptr(true)}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v; want %#v", got, tt.want)
			}
			roundTrip(t, got)
		})
	}
}

func TestParseErrors(t *testing.T) {
	listMap := func(items string) string {
		return `{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"],"items":` + items + `}`
	}
	tests := []struct {
		name, in, want string
	}{
		{"unknown type, path named", `{"properties":{"spec":{"properties":{"ports":{"type":"array","items":{"type":"foo"}}}}}}`,
			`schema: properties.spec.properties.ports.items: unknown type "foo"`},
		{"type null", `{"type":"null"}`, `schema: type: type cannot be null, use nullable`},
		{"unknown keyword", `{"typ":"string"}`, `schema: unknown field "typ"`},
		{"ref", `{"properties":{"a":{"$ref":"#/x"}}}`, `schema: properties.a.$ref: not supported`},
		{"items array", `{"type":"array","items":[{"type":"string"}]}`, `schema: items: must be a schema object and not an array`},
		{"not an object", `[1]`, `schema: a schema must be an object, not a list`},
		{"wrong value type", `{"type":"string","minLength":"1"}`, `schema: minLength: must be an integer, not a string`},
		{"fractional integer", `{"minLength":1.5}`, `schema: minLength: must be an integer, not a number`},
		{"property with a dot", `{"properties":{"a.b":{"type":1}}}`, `schema: properties["a.b"].type: must be a string, not a number`},
		{"preserve false", `{"x-kubernetes-preserve-unknown-fields":false}`, `schema: x-kubernetes-preserve-unknown-fields: must be true or undefined`},
		{"list type on object", `{"type":"object","x-kubernetes-list-type":"set"}`, `schema: type: must be array if x-kubernetes-list-type is specified`},
		{"bad list type", `{"type":"array","x-kubernetes-list-type":"bag"}`, `schema: x-kubernetes-list-type: "bag" is not atomic, set or map`},
		{"map keys without map", `{"type":"array","x-kubernetes-list-type":"set","x-kubernetes-list-map-keys":["a"],"items":{"type":"string"}}`,
			`schema: x-kubernetes-list-type: must be map if x-kubernetes-list-map-keys is non-empty`},
		{"list map without keys", `{"type":"array","x-kubernetes-list-type":"map","items":{"type":"object"}}`,
			`schema: x-kubernetes-list-map-keys: must not be empty if x-kubernetes-list-type is map`},
		{"list map without items", `{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"]}`,
			`schema: items: must have a schema if x-kubernetes-list-type is map`},
		{"list map of strings", listMap(`{"type":"string"}`), `schema: items.type: must be object if parent array's x-kubernetes-list-type is map`},
		{"key not a property", listMap(`{"type":"object"}`), `schema: x-kubernetes-list-map-keys: "k" is not a property of the items`},
		{"key not scalar", listMap(`{"type":"object","required":["k"],"properties":{"k":{"type":"object"}}}`),
			`schema: items.properties.k.type: must be a scalar type if parent array's x-kubernetes-list-type is map`},
		{"key optional", listMap(`{"type":"object","properties":{"k":{"type":"string"}}}`),
			`schema: items.properties.k.default: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`},
		{"key nullable", listMap(`{"type":"object","required":["k"],"properties":{"k":{"type":"string","nullable":true}}}`),
			`schema: items.properties.k.nullable: this property is in x-kubernetes-list-map-keys, so it cannot be nullable`},
		{"key twice", `{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k","k"],"items":{"type":"object","required":["k"],"properties":{"k":{"type":"string"}}}}`,
			`schema: x-kubernetes-list-map-keys: "k" is listed twice`},
		{"set of granular objects", `{"type":"array","x-kubernetes-list-type":"set","items":{"type":"object"}}`,
			`schema: items.x-kubernetes-map-type: must be atomic as item of a list with x-kubernetes-list-type=set`},
		{"set of set lists", `{"type":"array","x-kubernetes-list-type":"set","items":{"type":"array","x-kubernetes-list-type":"set"}}`,
			`schema: items.x-kubernetes-list-type: must be atomic as item of a list with x-kubernetes-list-type=set`},
		{"set of nullable", `{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string","nullable":true}}`,
			`schema: items.nullable: cannot be nullable when x-kubernetes-list-type is set`},
		{"map type without object", `{"type":"string","x-kubernetes-map-type":"atomic"}`, `schema: type: must be object if x-kubernetes-map-type is specified`},
		{"bad map type", `{"type":"object","x-kubernetes-map-type":"fine"}`, `schema: x-kubernetes-map-type: "fine" is not atomic or granular`},
		{"properties and additionalProperties", `{"type":"object","properties":{"a":{}},"additionalProperties":{}}`,
			`schema: additionalProperties: additionalProperties and properties are mutually exclusive`},
		{"rule missing", `{"x-kubernetes-validations":[{"message":"m"}]}`, `schema: x-kubernetes-validations[0].rule: required`},
		{"bad yaml", "type: [", `schema: yaml: line 1: did not find expected node content`},
		{"too deep", strings.Repeat(`{"items":`, maxDepth+2) + `{}` + strings.Repeat(`}`, maxDepth+2), "nested deeper than 500 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			if err == nil {
				t.Fatalf("got no error; want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %q; want %q", err, tt.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("got errors.Is(err, ErrInvalid) false for %v", err)
			}
		})
	}
}

func TestErrorFields(t *testing.T) {
	_, err := Parse([]byte(`{"properties":{"a":{"type":"foo"}}}`))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %T; want *Error", err)
	}
	if e.Path != "properties.a" || e.Err.Error() != `unknown type "foo"` {
		t.Errorf("got Path %q Err %q; want properties.a, unknown type \"foo\"", e.Path, e.Err)
	}
}

func TestJSON(t *testing.T) {
	s := &Schema{Type: "array", Items: &Schema{Type: "string"}, MaxItems: ptr[int64](3), Minimum: ptr(1.5), Ext: Ext{ListType: "set", PatchStrategy: "merge"}}
	want := map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "maxItems": int64(3), "minimum": 1.5,
		"x-kubernetes-list-type": "set", "x-kubernetes-patch-strategy": "merge"}
	if got := s.JSON(); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v; want %v", got, want)
	}
	if got := (*Schema)(nil).JSON(); len(got) != 0 {
		t.Errorf("got %v for nil; want {}", got)
	}
	roundTrip(t, s)
}

// roundTrip checks Parse(JSON(s)) and FromJSON(JSON(s)) give s back.
func roundTrip(t *testing.T, s *Schema) {
	t.Helper()
	s = withoutGoTypes(s) // not published
	b, err := json.Marshal(s.JSON())
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	got, err := Parse(b)
	if err != nil {
		t.Fatalf("Parse(JSON()): %v\n%s", err, b)
	}
	if !reflect.DeepEqual(got, s) {
		t.Errorf("Parse(JSON()) got %s; want the same as before", b)
	}
	again, err := FromJSON(s.JSON())
	if err != nil {
		t.Fatalf("FromJSON(JSON()): %v", err)
	}
	if !reflect.DeepEqual(again, s) {
		t.Errorf("FromJSON(JSON()) got %#v; want %#v", again, s)
	}
}

// withoutGoTypes is a copy of s with every node's GoType cleared.
func withoutGoTypes(s *Schema) *Schema {
	if s == nil {
		return nil
	}
	c := *s
	c.GoType = ""
	if s.Properties != nil {
		c.Properties = make(map[string]*Schema, len(s.Properties))
		for k, p := range s.Properties {
			c.Properties[k] = withoutGoTypes(p)
		}
	}
	c.AdditionalProperties = withoutGoTypes(s.AdditionalProperties)
	c.Items = withoutGoTypes(s.Items)
	c.Not = withoutGoTypes(s.Not)
	for _, l := range []*[]*Schema{&c.AllOf, &c.AnyOf, &c.OneOf} {
		if *l == nil {
			continue
		}
		out := make([]*Schema, len(*l))
		for i, e := range *l {
			out[i] = withoutGoTypes(e)
		}
		*l = out
	}
	return &c
}
