package schema

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

type declaredTime struct{}

func (declaredTime) OpenAPISchemaType() []string { return []string{"string"} }
func (declaredTime) OpenAPISchemaFormat() string { return "date-time" }

type intOrString struct{}

func (intOrString) OpenAPISchemaType() []string   { return []string{"string"} }
func (intOrString) OpenAPISchemaFormat() string   { return "int-or-string" }
func (intOrString) OpenAPIV3OneOfTypes() []string { return []string{"integer", "string"} }

type quantity struct{}

func (*quantity) OpenAPISchemaType() []string   { return []string{"string"} }
func (*quantity) OpenAPIV3OneOfTypes() []string { return []string{"string", "number"} }

type opaque struct{}

func (opaque) MarshalJSON() ([]byte, error) { return []byte(`{}`), nil }

type text int

func (text) MarshalText() ([]byte, error) { return []byte("t"), nil }

type Base struct {
	Kind string `json:"kind,omitempty"`
	Name string `json:"name"`
}

type node struct {
	Value    string  `json:"value"`
	Children []node  `json:"children,omitempty"`
	Parent   *node   `json:"parent,omitempty"`
	Next     *wraps  `json:"next,omitempty"`
	Meta     declTag `json:"meta"`
}

type wraps struct {
	N node `json:"n"`
}

type declTag struct{}

func TestFor(t *testing.T) {
	str, integer := &Schema{Type: "string"}, func(f string) *Schema { return &Schema{Type: "integer", Format: f} }
	obj := func(req []string, props map[string]*Schema) *Schema {
		return &Schema{Type: "object", Required: req, Properties: props}
	}
	tests := []struct {
		name string
		typ  reflect.Type
		want *Schema
	}{
		{"string", reflect.TypeFor[string](), str},
		{"bool", reflect.TypeFor[bool](), &Schema{Type: "boolean"}},
		{"int is int32 as in kube-openapi", reflect.TypeFor[int](), integer("int32")},
		{"int64", reflect.TypeFor[int64](), integer("int64")},
		{"uint32", reflect.TypeFor[uint32](), integer("int64")},
		{"int8", reflect.TypeFor[int8](), integer("byte")},
		{"float32", reflect.TypeFor[float32](), &Schema{Type: "number", Format: "float"}},
		{"float64", reflect.TypeFor[float64](), &Schema{Type: "number", Format: "double"}},
		{"bytes", reflect.TypeFor[[]byte](), &Schema{Type: "string", Format: "byte"}},
		{"time", reflect.TypeFor[time.Time](), &Schema{Type: "string", Format: "date-time"}},
		{"pointer", reflect.TypeFor[**int64](), integer("int64")},
		{"slice", reflect.TypeFor[[]string](), &Schema{Type: "array", Items: str}},
		{"array", reflect.TypeFor[[2]string](), &Schema{Type: "array", Items: str}},
		{"map", reflect.TypeFor[map[string]int32](), &Schema{Type: "object", AdditionalProperties: integer("int32")}},
		{"interface", reflect.TypeFor[any](), &Schema{Ext: Ext{PreserveUnknownFields: true}}},
		{"declared type and format", reflect.TypeFor[declaredTime](), &Schema{Type: "string", Format: "date-time"}},
		{"int-or-string", reflect.TypeFor[intOrString](), &Schema{AnyOf: []*Schema{{Type: "integer"}, {Type: "string"}}, Ext: Ext{IntOrString: true}}},
		{"quantity, pointer receiver", reflect.TypeFor[quantity](), &Schema{AnyOf: []*Schema{{Type: "string"}, {Type: "number"}}, Ext: Ext{IntOrString: true}}},
		{"declared object is opaque", reflect.TypeFor[fieldsV1](), &Schema{Type: "object", Ext: Ext{PreserveUnknownFields: true}}},
		{"MarshalJSON is any value", reflect.TypeFor[opaque](), &Schema{Ext: Ext{PreserveUnknownFields: true}}},
		{"json.RawMessage is any value", reflect.TypeFor[json.RawMessage](), &Schema{Ext: Ext{PreserveUnknownFields: true}}},
		{"MarshalText is a string", reflect.TypeFor[text](), str},
		{"struct tags", reflect.TypeFor[struct {
			A      string  `json:"a"`
			B      string  `json:"b,omitempty"`
			C      *string `json:"c"`
			D      string  `json:"d,omitzero"`
			Skip   string  `json:"-"`
			NoTag  int32
			Quoted int64 `json:"q,string"`
			hidden string
		}](), obj([]string{"a", "NoTag", "q"}, map[string]*Schema{"a": str, "b": str, "c": str, "d": str, "NoTag": integer("int32"), "q": str})},
		{"inline, outer wins", reflect.TypeFor[struct {
			Base `json:",inline"`
			Kind int32 `json:"kind"`
		}](), obj([]string{"kind", "name"}, map[string]*Schema{"kind": integer("int32"), "name": str})},
		{"embedded pointer inlined", reflect.TypeFor[struct{ *Base }](), obj([]string{"name"}, map[string]*Schema{"kind": str, "name": str})},
		{"embedded with a name", reflect.TypeFor[struct {
			Base `json:"base"`
		}](), obj([]string{"base"}, map[string]*Schema{"base": obj([]string{"name"}, map[string]*Schema{"kind": str, "name": str})})},
		{"patch and list tags", reflect.TypeFor[struct {
			Ports []struct {
				Port     int32  `json:"port"`
				Protocol string `json:"protocol,omitempty" default:"TCP"`
			} `json:"ports,omitempty" patchStrategy:"merge" patchMergeKey:"port" listType:"map" listMapKeys:"port,protocol"`
			Tags   []string          `json:"tags,omitempty" patchStrategy:"merge" listType:"set"`
			Labels map[string]string `json:"labels,omitempty" mapType:"atomic"`
			Refs   []Base            `json:"refs,omitempty" listType:"set" mapType:"atomic"`
			N      int32             `json:"n,omitempty" default:"80"`
		}](), obj(nil, map[string]*Schema{
			"ports": {Type: "array", Ext: Ext{PatchStrategy: "merge", PatchMergeKey: "port", ListType: "map", ListMapKeys: []string{"port", "protocol"}},
				Items: obj([]string{"port"}, map[string]*Schema{"port": integer("int32"), "protocol": {Type: "string", Default: "TCP"}})},
			"tags":   {Type: "array", Items: str, Ext: Ext{PatchStrategy: "merge", ListType: "set"}},
			"labels": {Type: "object", AdditionalProperties: str, Ext: Ext{MapType: "atomic"}},
			"refs": {Type: "array", Ext: Ext{ListType: "set"},
				Items: &Schema{Type: "object", Required: []string{"name"}, Properties: map[string]*Schema{"kind": str, "name": str}, Ext: Ext{MapType: "atomic"}}},
			"n": {Type: "integer", Format: "int32", Default: json.Number("80")},
		})},
		{"recursion stops", reflect.TypeFor[node](), obj([]string{"value", "meta"}, map[string]*Schema{
			"value":    str,
			"children": {Type: "array", Items: &Schema{Type: "object", Ext: Ext{PreserveUnknownFields: true}}},
			"parent":   {Type: "object", Ext: Ext{PreserveUnknownFields: true}},
			"next":     obj([]string{"n"}, map[string]*Schema{"n": {Type: "object", Ext: Ext{PreserveUnknownFields: true}}}),
			"meta":     {Type: "object"},
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := For(tt.typ)
			if err != nil {
				t.Fatalf("For: %v", err)
			}
			if !reflect.DeepEqual(withoutGoTypes(got), tt.want) { // TestForGoType
				gj, _ := json.Marshal(got.JSON())
				wj, _ := json.Marshal(tt.want.JSON())
				t.Errorf("got %s; want %s", gj, wj)
			}
			roundTrip(t, got)
		})
	}
}

func TestForGoType(t *testing.T) {
	type inner struct {
		N int `json:"n"`
	}
	type outer struct {
		In   inner   `json:"in"`
		Ins  []inner `json:"ins"`
		Anon struct {
			X string `json:"x"`
		} `json:"anon" goType:"v1.AnonSpec"`
		Anons []struct {
			X string `json:"x"`
		} `json:"anons" goType:"v1.AnonItem"`
		Plain struct {
			X string `json:"x"`
		} `json:"plain"`
	}
	s, err := For(reflect.TypeFor[outer]())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		node *Schema
		want string
	}{
		{"named struct", s, "schema.outer"},
		{"field of a named struct", s.Properties["in"], "schema.inner"},
		{"items of a slice", s.Properties["ins"].Items, "schema.inner"},
		{"anonymous struct with goType", s.Properties["anon"], "v1.AnonSpec"},
		{"anonymous items with goType", s.Properties["anons"].Items, "v1.AnonItem"},
		{"anonymous struct without goType", s.Properties["plain"], ""},
		{"GoTypeName method", ConfigMap(), "v1.ConfigMap"},
		{"ObjectMeta", ConfigMap().Properties["metadata"], "v1.ObjectMeta"},
		{"anonymous mirror", Namespace().Properties["spec"], "v1.NamespaceSpec"},
		{"every mirror names its type", TokenReview(), "v1.TokenReview"},
		{"a mirror of two types", LocalSubjectAccessReview(), "v1.LocalSubjectAccessReview"},
		{"scalar", s.Properties["in"].Properties["n"], ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.node.GoType; got != tt.want {
				t.Errorf("GoType = %q; want %q", got, tt.want)
			}
		})
	}
}

func TestForErrors(t *testing.T) {
	tests := []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{"nil", nil, "schema: nil type"},
		{"chan", reflect.TypeFor[struct {
			C chan int `json:"c"`
		}](), "schema: c: unsupported Go type chan int"},
		{"func in a list", reflect.TypeFor[struct {
			F []func() `json:"f"`
		}](), "schema: f[]: unsupported Go type func()"},
		{"map key", reflect.TypeFor[map[[2]int]string](), "schema: unsupported map key type [2]int"},
		{"list map keys need map", reflect.TypeFor[struct {
			L []Base `json:"l" listMapKeys:"name"`
		}](), "schema: l.x-kubernetes-list-type: must be map if x-kubernetes-list-map-keys is non-empty"},
		{"optional key", reflect.TypeFor[struct {
			L []Base `json:"l" listType:"map" listMapKeys:"kind"`
		}](), "schema: l.items.properties.kind.default: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"},
		{"bad default", reflect.TypeFor[struct {
			N int `json:"n" default:"x"`
		}](), `schema: n: default tag "x" is not JSON`},
		{"duplicate name", reflect.TypeFor[struct {
			X string
			B string `json:"X"`
		}](), `schema: X: two fields have the JSON name "X"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := For(tt.typ)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v; want %q", err, tt.want)
			}
		})
	}
}

func TestOf(t *testing.T) {
	got, err := Of[Base]()
	want := &Schema{Type: "object", Required: []string{"name"}, Properties: map[string]*Schema{"kind": {Type: "string"}, "name": {Type: "string"}}, Ext: Ext{GoType: "schema.Base"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, %v; want %v", got, err, want)
	}
}
