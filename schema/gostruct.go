package schema

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"time"
)

// Of is For(reflect.TypeFor[T]()).
func Of[T any]() (*Schema, error) { return For(reflect.TypeFor[T]()) }

// For derives a schema from a Go type the way kube's OpenAPI generator
// (k8s.io/kube-openapi) does for k8s.io/api types, so that a program's own
// structs get the merge semantics kube gives built-in kinds.
//
// Types, by kube-openapi's table:
//
//	string                        string
//	bool                          boolean
//	int, int16, int32, uint, uint16  integer int32
//	int64, uint32, uint64         integer int64
//	int8, uint8                   integer byte
//	float32 / float64             number float / double
//	[]byte                        string byte
//	time.Time                     string date-time
//	*T                            T's schema (never nullable)
//	[]T, [n]T                     array, Items T
//	map[K]V                       object, AdditionalProperties V
//	struct                        object, Properties from the fields
//	interface                     any value (x-kubernetes-preserve-unknown-fields)
//
// A type with a method OpenAPISchemaType() []string (metav1.Time,
// resource.Quantity, intstr.IntOrString) has the type and, from
// OpenAPISchemaFormat() string, the format it declares; declared "object"
// keeps unknown fields (it is opaque, like metav1.FieldsV1). A type whose
// OpenAPIV3OneOfTypes() []string, or whose format "int-or-string", allows
// integers or numbers and strings is x-kubernetes-int-or-string with anyOf
// those types (as controller-gen writes it). Any other type with its own
// MarshalJSON is any value; one with MarshalText is a string.
//
// Struct fields follow encoding/json: the json tag's name (the Go name
// without one), "-" skips, an embedded struct without a name is inlined
// (k8s.io/api's `json:",inline"`), outer fields win over inlined ones, and
// ",string" makes a string. A field is required unless it has omitempty or
// omitzero or is a pointer. Other tags:
//
//	patchStrategy:"merge"            x-kubernetes-patch-strategy (k8s.io/api's tag)
//	patchMergeKey:"name"             x-kubernetes-patch-merge-key (k8s.io/api's tag)
//	listType:"map"                   x-kubernetes-list-type: atomic, set, map
//	listMapKeys:"port,protocol"      x-kubernetes-list-map-keys
//	mapType:"atomic"                 x-kubernetes-map-type of a map or struct
//	                                 field; on a slice field, of its items
//	default:"TCP"                    default: the text for a string field,
//	                                 JSON otherwise (default:"80", default:"[]")
//	goType:"v1.NamespaceSpec"        the GoType of an anonymous struct field
//	                                 (of its items, on a slice)
//
// A struct type's GoType is what its GoTypeName() string method returns,
// else reflect's name for it ("v1.Widget").
//
// These tags stand for kube's +listType, +listMapKey, +mapType/+structType
// and +default comment markers, which are gone at run time; so is every
// description. For k8s.io/api types that means patch strategies and merge
// keys but no list types. The result passes FromJSON's checks, or For
// returns the error, with the Go field path.
//
// Worked example:
//
//	type Port struct {
//		Port     int32  `json:"port"`
//		Protocol string `json:"protocol,omitempty" default:"TCP"`
//	}
//	type Spec struct {
//		Ports []Port `json:"ports,omitempty" listType:"map" listMapKeys:"port,protocol" patchStrategy:"merge" patchMergeKey:"port"`
//	}
//
// gives {type: object, properties: {ports: {type: array,
// x-kubernetes-list-type: map, x-kubernetes-list-map-keys: [port,
// protocol], x-kubernetes-patch-strategy: merge,
// x-kubernetes-patch-merge-key: port, items: {type: object, required:
// [port], properties: {port: {type: integer, format: int32}, protocol:
// {type: string, default: TCP}}}}}}.
//
// A struct type that contains itself (directly or through others) is
// expanded once on each path; the inner occurrence is {type: object,
// x-kubernetes-preserve-unknown-fields: true}, keeping whatever a client
// sends below it.
func For(t reflect.Type) (*Schema, error) {
	if t == nil {
		return nil, errorf("", "nil type")
	}
	g := gen{open: map[reflect.Type]bool{}}
	return g.schema(t, "")
}

type gen struct {
	open map[reflect.Type]bool // struct types being expanded on this path
}

var (
	timeType     = reflect.TypeFor[time.Time]()
	marshaler    = reflect.TypeFor[json.Marshaler]()
	textMarshal  = reflect.TypeFor[encoding.TextMarshaler]()
	schemaTyper  = reflect.TypeFor[interface{ OpenAPISchemaType() []string }]()
	schemaFormat = reflect.TypeFor[interface{ OpenAPISchemaFormat() string }]()
	oneOfTyper   = reflect.TypeFor[interface{ OpenAPIV3OneOfTypes() []string }]()
	goTypeNamer  = reflect.TypeFor[interface{ GoTypeName() string }]()
)

// goTypeName is the GoType of a struct type t: what its GoTypeName method
// says (the mirrors of k8s.io/api's types in this package name the types
// they mirror), else reflect's name ("v1.Widget"), "" for an anonymous
// struct.
func goTypeName(t reflect.Type) string {
	name := t.String()
	if !implements(t, goTypeNamer, func(v reflect.Value) {
		name = v.Interface().(interface{ GoTypeName() string }).GoTypeName()
	}) && t.Name() == "" {
		return ""
	}
	return name
}

// implements reports whether t or *t has the interface i's methods, and
// calls f with a value that has them.
func implements(t, i reflect.Type, f func(v reflect.Value)) bool {
	switch {
	case t.Implements(i):
		f(reflect.Zero(t))
	case reflect.PointerTo(t).Implements(i):
		f(reflect.New(t))
	default:
		return false
	}
	return true
}

func (g gen) schema(t reflect.Type, path string) (*Schema, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s, ok := declared(t); ok {
		return s, nil
	}
	switch {
	case t == timeType:
		return &Schema{Type: "string", Format: "date-time"}, nil
	case implements(t, marshaler, func(reflect.Value) {}):
		return &Schema{Ext: Ext{PreserveUnknownFields: true}}, nil
	case implements(t, textMarshal, func(reflect.Value) {}):
		return &Schema{Type: "string"}, nil
	}
	switch t.Kind() {
	case reflect.String:
		return &Schema{Type: "string"}, nil
	case reflect.Bool:
		return &Schema{Type: "boolean"}, nil
	case reflect.Int, reflect.Int16, reflect.Int32, reflect.Uint, reflect.Uint16:
		return &Schema{Type: "integer", Format: "int32"}, nil
	case reflect.Int64, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return &Schema{Type: "integer", Format: "int64"}, nil
	case reflect.Int8, reflect.Uint8:
		return &Schema{Type: "integer", Format: "byte"}, nil
	case reflect.Float32:
		return &Schema{Type: "number", Format: "float"}, nil
	case reflect.Float64:
		return &Schema{Type: "number", Format: "double"}, nil
	case reflect.Interface:
		return &Schema{Ext: Ext{PreserveUnknownFields: true}}, nil
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			return &Schema{Type: "string", Format: "byte"}, nil
		}
		items, err := g.schema(t.Elem(), path+"[]")
		if err != nil {
			return nil, err
		}
		return &Schema{Type: "array", Items: items}, nil
	case reflect.Map:
		switch k := t.Key(); {
		case k.Kind() == reflect.String, k.Implements(textMarshal),
			k.Kind() >= reflect.Int && k.Kind() <= reflect.Uintptr:
		default:
			return nil, errorf(path, "unsupported map key type %s", k)
		}
		v, err := g.schema(t.Elem(), path+"[*]")
		if err != nil {
			return nil, err
		}
		return &Schema{Type: "object", AdditionalProperties: v}, nil
	case reflect.Struct:
		return g.object(t, path)
	}
	return nil, errorf(path, "unsupported Go type %s", t)
}

// declared is the schema a type states with OpenAPISchemaType,
// OpenAPISchemaFormat and OpenAPIV3OneOfTypes.
func declared(t reflect.Type) (*Schema, bool) {
	var types, oneOf []string
	var format string
	if !implements(t, schemaTyper, func(v reflect.Value) {
		types = v.Interface().(interface{ OpenAPISchemaType() []string }).OpenAPISchemaType()
	}) {
		return nil, false
	}
	implements(t, schemaFormat, func(v reflect.Value) {
		format = v.Interface().(interface{ OpenAPISchemaFormat() string }).OpenAPISchemaFormat()
	})
	implements(t, oneOfTyper, func(v reflect.Value) {
		oneOf = v.Interface().(interface{ OpenAPIV3OneOfTypes() []string }).OpenAPIV3OneOfTypes()
	})
	if format == "int-or-string" && len(oneOf) == 0 {
		oneOf = []string{"integer", "string"}
	}
	if has(oneOf, "string") && (has(oneOf, "integer") || has(oneOf, "number")) {
		s := &Schema{Ext: Ext{IntOrString: true}}
		for _, o := range oneOf {
			s.AnyOf = append(s.AnyOf, &Schema{Type: o})
		}
		return s, true
	}
	s := &Schema{Format: format}
	if len(types) == 1 {
		s.Type = types[0]
	}
	if s.Type == "" || s.Type == "object" {
		s.PreserveUnknownFields = true
	}
	return s, true
}

func (g gen) object(t reflect.Type, path string) (*Schema, error) {
	if g.open[t] {
		return &Schema{Type: "object", Ext: Ext{PreserveUnknownFields: true}}, nil
	}
	g.open[t] = true
	defer delete(g.open, t)

	s := &Schema{Type: "object", Ext: Ext{GoType: goTypeName(t)}}
	var inline []*Schema
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if tag == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			sub, err := g.object(ft, path)
			if err != nil {
				return nil, err
			}
			inline = append(inline, sub)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		p := join(path, name)
		fs, err := g.field(f, p, has(strings.Split(opts, ","), "string"))
		if err != nil {
			return nil, err
		}
		if _, dup := s.Properties[name]; dup {
			return nil, errorf(p, "two fields have the JSON name %q", name)
		}
		if s.Properties == nil {
			s.Properties = map[string]*Schema{}
		}
		s.Properties[name] = fs
		o := strings.Split(opts, ",")
		if !has(o, "omitempty") && !has(o, "omitzero") && f.Type.Kind() != reflect.Pointer {
			s.Required = append(s.Required, name)
		}
	}
	for _, in := range inline {
		for k, v := range in.Properties {
			if _, taken := s.Properties[k]; taken {
				continue
			}
			if s.Properties == nil {
				s.Properties = map[string]*Schema{}
			}
			s.Properties[k] = v
			if has(in.Required, k) {
				s.Required = append(s.Required, k)
			}
		}
	}
	return s, nil
}

// field is the schema of one struct field with its tags applied.
func (g gen) field(f reflect.StructField, path string, asString bool) (*Schema, error) {
	s, err := g.schema(f.Type, path)
	if err != nil {
		return nil, err
	}
	if asString && (s.Type == "integer" || s.Type == "number" || s.Type == "boolean") {
		s = &Schema{Type: "string"}
	}
	s.PatchStrategy = f.Tag.Get("patchStrategy")
	s.PatchMergeKey = f.Tag.Get("patchMergeKey")
	s.ListType = f.Tag.Get("listType")
	if k := f.Tag.Get("listMapKeys"); k != "" {
		s.ListMapKeys = strings.Split(k, ",")
	}
	if mt := f.Tag.Get("mapType"); mt != "" {
		switch {
		case s.Type == "array" && s.Items != nil:
			s.Items.MapType = mt
		default:
			s.MapType = mt
		}
	}
	if gt := f.Tag.Get("goType"); gt != "" {
		if s.Type == "array" && s.Items != nil {
			s.Items.GoType = gt
		} else {
			s.GoType = gt
		}
	}
	if d, ok := f.Tag.Lookup("default"); ok {
		if s.Type == "string" {
			s.Default = d
		} else {
			dec := json.NewDecoder(bytes.NewReader([]byte(d)))
			dec.UseNumber()
			if err := dec.Decode(&s.Default); err != nil {
				return nil, errorf(path, "default tag %q is not JSON: %v", d, err)
			}
		}
	}
	if s.Items != nil {
		if err := check(s.Items, path+"[]"); err != nil {
			return nil, err
		}
	}
	if err := check(s, path); err != nil {
		return nil, err
	}
	return s, nil
}
