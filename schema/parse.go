package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/internal/jsonval"
)

// ErrInvalid is wrapped by every error of Parse, FromJSON, For, ParseCRDs
// and LoadCRDs about their input (not about reading files).
var ErrInvalid = errors.New("schema: invalid")

// Error is an invalid schema, Go type or CRD manifest, with where it is.
// errors.Is(err, ErrInvalid) holds for every *Error.
//
//	schema: properties.spec.properties.ports.items: unknown type "foo"
//	schema: crds/a.yaml: widgets.example.com: spec.names.plural: required
type Error struct {
	File string // LoadCRDs: the file the CRD came from
	CRD  string // the CRD's metadata.name, or "document 2" when it has none
	Path string // the field, e.g. "properties.spec.items"; "" for the whole input
	Err  error  // what is wrong
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("schema: ")
	for _, s := range []string{e.File, e.CRD, e.Path} {
		if s != "" {
			b.WriteString(s)
			b.WriteString(": ")
		}
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns ErrInvalid and the cause.
func (e *Error) Unwrap() []error { return []error{ErrInvalid, e.Err} }

func errorf(path, format string, a ...any) *Error {
	return &Error{Path: path, Err: fmt.Errorf(format, a...)}
}

// maxDepth bounds the nesting of a schema Parse and FromJSON accept, so
// that hostile input cannot exhaust the stack.
const maxDepth = 500

// Parse reads an OpenAPI v3 schema in the JSONSchemaProps form a CRD's
// openAPIV3Schema has, as JSON or YAML. Numbers in default, enum and
// example values are json.Number, as kapi holds objects. See FromJSON for
// what is accepted and checked.
//
//	s, err := schema.Parse([]byte(`
//	type: object
//	properties:
//	  ports:
//	    type: array
//	    x-kubernetes-list-type: map
//	    x-kubernetes-list-map-keys: [port]
//	    items: {type: object, required: [port], properties: {port: {type: integer}}}
//	`))
//	// s.Properties["ports"].ListMapKeys is []string{"port"}
func Parse(b []byte) (*Schema, error) {
	v, err := decode(b)
	if err != nil {
		return nil, &Error{Err: err}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errorf("", "a schema must be an object, not %s", kindOf(v))
	}
	return FromJSON(m)
}

// decode reads one JSON or YAML document with numbers as json.Number.
func decode(b []byte) (any, error) {
	if !json.Valid(b) { // YAML, including flow style: {type: object}
		j, err := yaml.YAMLToJSON(b)
		if err != nil {
			return nil, err
		}
		b = j
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// FromJSON reads a decoded OpenAPI v3 schema (the JSONSchemaProps form).
// Every keyword of JSONSchemaProps that structural schemas allow is kept,
// with the x-kubernetes extensions (preserve-unknown-fields,
// embedded-resource, int-or-string, list-type, list-map-keys, map-type,
// validations, patch-strategy, patch-merge-key) in Ext. "$schema" and
// "externalDocs" are accepted and dropped; "additionalProperties: false"
// is dropped (a structural schema prunes unknown fields anyway) and
// "additionalProperties: true" is AdditionalProperties &Schema{}. What
// apiextensions.k8s.io/v1 forbids ($ref, id, definitions, dependencies,
// patternProperties, additionalItems, type null, items as an array) and
// unknown keywords are errors naming the path, as are the rules kube
// enforces that merging relies on:
//   - x-kubernetes-list-type is atomic, set or map, on type array only;
//   - x-kubernetes-list-map-keys needs list-type map, and list-type map
//     needs keys naming scalar, non-nullable properties of the items that
//     are required or have a default;
//   - the items of a list-type set are scalars or atomic;
//   - x-kubernetes-map-type is atomic or granular, on type object only;
//   - properties and additionalProperties exclude each other.
//
// Default, enum and example values are copied. Empty lists and maps read
// as nil, so Parse(JSON(s)) equals s.
func FromJSON(v map[string]any) (*Schema, error) {
	return fromMap(v, "", 0)
}

func fromMap(m map[string]any, path string, depth int) (*Schema, error) {
	if depth > maxDepth {
		return nil, errorf(path, "nested deeper than %d levels", maxDepth)
	}
	s := &Schema{}
	r := reader{path: path}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		switch k {
		case "type":
			s.Type = r.str(k, v)
			switch s.Type {
			case "", "object", "array", "string", "integer", "number", "boolean":
			case "null":
				r.fail(k, "type cannot be null, use nullable")
			default:
				r.failAt(path, "unknown type %q", s.Type)
			}
		case "format":
			s.Format = r.str(k, v)
		case "description":
			s.Description = r.str(k, v)
		case "title":
			s.Title = r.str(k, v)
		case "nullable":
			s.Nullable = r.boolean(k, v)
		case "default":
			s.Default = copyValue(v)
		case "example":
			s.Example = copyValue(v)
		case "enum":
			for _, e := range r.list(k, v) {
				s.Enum = append(s.Enum, copyValue(e))
			}
		case "required":
			s.Required = r.strings(k, v)
		case "pattern":
			s.Pattern = r.str(k, v)
		case "minLength":
			s.MinLength = r.integer(k, v)
		case "maxLength":
			s.MaxLength = r.integer(k, v)
		case "minItems":
			s.MinItems = r.integer(k, v)
		case "maxItems":
			s.MaxItems = r.integer(k, v)
		case "minProperties":
			s.MinProperties = r.integer(k, v)
		case "maxProperties":
			s.MaxProperties = r.integer(k, v)
		case "minimum":
			s.Minimum = r.number(k, v)
		case "maximum":
			s.Maximum = r.number(k, v)
		case "multipleOf":
			s.MultipleOf = r.number(k, v)
		case "exclusiveMinimum":
			s.ExclusiveMinimum = r.boolean(k, v)
		case "exclusiveMaximum":
			s.ExclusiveMaximum = r.boolean(k, v)
		case "uniqueItems":
			s.UniqueItems = r.boolean(k, v)
		case "properties":
			pm := r.object(k, v)
			for name, pv := range pm {
				if s.Properties == nil {
					s.Properties = make(map[string]*Schema, len(pm))
				}
				s.Properties[name] = r.sub(join(path, k, name), pv, depth)
			}
		case "additionalProperties":
			if b, ok := v.(bool); ok {
				if b {
					s.AdditionalProperties = &Schema{}
				}
				continue
			}
			s.AdditionalProperties = r.sub(join(path, k), v, depth)
		case "items":
			if _, ok := v.([]any); ok {
				r.fail(k, "must be a schema object and not an array")
				continue
			}
			s.Items = r.sub(join(path, k), v, depth)
		case "allOf", "anyOf", "oneOf":
			var l []*Schema
			for i, e := range r.list(k, v) {
				l = append(l, r.sub(fmt.Sprintf("%s[%d]", join(path, k), i), e, depth))
			}
			switch k {
			case "allOf":
				s.AllOf = l
			case "anyOf":
				s.AnyOf = l
			default:
				s.OneOf = l
			}
		case "not":
			s.Not = r.sub(join(path, k), v, depth)
		case "x-kubernetes-preserve-unknown-fields":
			if s.PreserveUnknownFields = r.boolean(k, v); !s.PreserveUnknownFields {
				r.fail(k, "must be true or undefined")
			}
		case "x-kubernetes-embedded-resource":
			s.EmbeddedResource = r.boolean(k, v)
		case "x-kubernetes-int-or-string":
			s.IntOrString = r.boolean(k, v)
		case "x-kubernetes-list-type":
			s.ListType = r.str(k, v)
		case "x-kubernetes-list-map-keys":
			s.ListMapKeys = r.strings(k, v)
		case "x-kubernetes-map-type":
			s.MapType = r.str(k, v)
		case "x-kubernetes-validations":
			s.Validations = r.rules(k, v)
		case "x-kubernetes-patch-strategy":
			s.PatchStrategy = r.str(k, v)
		case "x-kubernetes-patch-merge-key":
			s.PatchMergeKey = r.str(k, v)
		case "$schema", "externalDocs":
			// accepted and dropped
		case "$ref", "id", "definitions", "dependencies", "patternProperties", "additionalItems":
			r.fail(k, "not supported")
		default:
			r.failAt(path, "unknown field %q", k)
		}
		if r.err != nil {
			return nil, r.err
		}
	}
	if err := check(s, path); err != nil {
		return nil, err
	}
	return s, nil
}

// check enforces the structural rules of FromJSON on one node whose
// children are built.
func check(s *Schema, path string) error {
	if s.MapType != "" {
		if s.MapType != "atomic" && s.MapType != "granular" {
			return errorf(join(path, "x-kubernetes-map-type"), "%q is not atomic or granular", s.MapType)
		}
		if s.Type != "object" {
			return errorf(join(path, "type"), "must be object if x-kubernetes-map-type is specified")
		}
	}
	if len(s.Properties) > 0 && s.AdditionalProperties != nil {
		return errorf(join(path, "additionalProperties"), "additionalProperties and properties are mutually exclusive")
	}
	if s.ListType != "" {
		if s.ListType != "atomic" && s.ListType != "set" && s.ListType != "map" {
			return errorf(join(path, "x-kubernetes-list-type"), "%q is not atomic, set or map", s.ListType)
		}
		if s.Type != "array" {
			return errorf(join(path, "type"), "must be array if x-kubernetes-list-type is specified")
		}
	}
	if len(s.ListMapKeys) > 0 && s.ListType != "map" {
		return errorf(join(path, "x-kubernetes-list-type"), "must be map if x-kubernetes-list-map-keys is non-empty")
	}
	items := join(path, "items")
	if (s.ListType == "set" || s.ListType == "map") && s.Items != nil && s.Items.Nullable {
		return errorf(join(items, "nullable"), "cannot be nullable when x-kubernetes-list-type is %s", s.ListType)
	}
	switch s.ListType {
	case "set":
		if it := s.Items; it != nil {
			if it.Type == "array" && it.ListType != "" && it.ListType != "atomic" {
				return errorf(join(items, "x-kubernetes-list-type"), "must be atomic as item of a list with x-kubernetes-list-type=set")
			}
			if it.Type == "object" && it.MapType != "atomic" {
				return errorf(join(items, "x-kubernetes-map-type"), "must be atomic as item of a list with x-kubernetes-list-type=set")
			}
		}
	case "map":
		if len(s.ListMapKeys) == 0 {
			return errorf(join(path, "x-kubernetes-list-map-keys"), "must not be empty if x-kubernetes-list-type is map")
		}
		if s.Items == nil {
			return errorf(items, "must have a schema if x-kubernetes-list-type is map")
		}
		if s.Items.Type != "object" {
			return errorf(join(items, "type"), "must be object if parent array's x-kubernetes-list-type is map")
		}
		seen := map[string]bool{}
		for _, k := range s.ListMapKeys {
			p, ok := s.Items.Properties[k]
			kp := join(items, "properties", k)
			switch {
			case !ok:
				return errorf(join(path, "x-kubernetes-list-map-keys"), "%q is not a property of the items", k)
			case seen[k]:
				return errorf(join(path, "x-kubernetes-list-map-keys"), "%q is listed twice", k)
			case p.Type == "array" || p.Type == "object":
				return errorf(join(kp, "type"), "must be a scalar type if parent array's x-kubernetes-list-type is map")
			case p.Nullable:
				return errorf(join(kp, "nullable"), "this property is in x-kubernetes-list-map-keys, so it cannot be nullable")
			case p.Default == nil && !has(s.Items.Required, k):
				return errorf(join(kp, "default"), "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property")
			}
			seen[k] = true
		}
	}
	return nil
}

// reader converts keyword values, keeping the first error.
type reader struct {
	path string
	err  error
}

func (r *reader) failAt(path, format string, a ...any) {
	if r.err == nil {
		r.err = errorf(path, format, a...)
	}
}

func (r *reader) fail(key, msg string) { r.failAt(join(r.path, key), "%s", msg) }

func (r *reader) wrong(key string, want string, v any) {
	r.failAt(join(r.path, key), "must be %s, not %s", want, kindOf(v))
}

func (r *reader) str(key string, v any) string {
	s, ok := v.(string)
	if !ok {
		r.wrong(key, "a string", v)
	}
	return s
}

func (r *reader) boolean(key string, v any) bool {
	b, ok := v.(bool)
	if !ok {
		r.wrong(key, "a boolean", v)
	}
	return b
}

func (r *reader) object(key string, v any) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		r.wrong(key, "an object", v)
	}
	return m
}

func (r *reader) list(key string, v any) []any {
	switch l := v.(type) {
	case []any:
		return l
	case []string:
		out := make([]any, len(l))
		for i, s := range l {
			out[i] = s
		}
		return out
	}
	r.wrong(key, "a list", v)
	return nil
}

func (r *reader) strings(key string, v any) []string {
	var out []string
	for i, e := range r.list(key, v) {
		s, ok := e.(string)
		if !ok {
			r.wrong(fmt.Sprintf("%s[%d]", key, i), "a string", e)
			return nil
		}
		out = append(out, s)
	}
	return out
}

func (r *reader) number(key string, v any) *float64 {
	f, ok := toFloat(v)
	if !ok {
		r.wrong(key, "a number", v)
		return nil
	}
	return &f
}

func (r *reader) integer(key string, v any) *int64 {
	f, ok := toFloat(v)
	if n, isNum := v.(json.Number); isNum {
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return &i
		}
	}
	if !ok || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		r.wrong(key, "an integer", v)
		return nil
	}
	i := int64(f)
	return &i
}

func (r *reader) sub(path string, v any, depth int) *Schema {
	if r.err != nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		r.failAt(path, "must be a schema object, not %s", kindOf(v))
		return nil
	}
	s, err := fromMap(m, path, depth+1)
	if err != nil {
		r.err = err
	}
	return s
}

func (r *reader) rules(key string, v any) []Rule {
	var out []Rule
	for i, e := range r.list(key, v) {
		p := fmt.Sprintf("%s[%d]", join(r.path, key), i)
		m, ok := e.(map[string]any)
		if !ok {
			r.failAt(p, "must be an object, not %s", kindOf(e))
			return nil
		}
		rr := reader{path: p}
		var rule Rule
		for k, f := range m {
			switch k {
			case "rule":
				rule.Rule = rr.str(k, f)
			case "message":
				rule.Message = rr.str(k, f)
			case "messageExpression":
				rule.MessageExpression = rr.str(k, f)
			case "fieldPath":
				rule.FieldPath = rr.str(k, f)
			case "reason":
				rule.Reason = rr.str(k, f)
			case "optionalOldSelf":
				b := rr.boolean(k, f)
				rule.OptionalOldSelf = &b
			default:
				rr.failAt(p, "unknown field %q", k)
			}
		}
		if rule.Rule == "" {
			rr.fail("rule", "required")
		}
		if rr.err != nil {
			r.err = rr.err
			return nil
		}
		out = append(out, rule)
	}
	return out
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(n), 64)
		return f, err == nil
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case uint64:
		return float64(n), true
	}
	return 0, false
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	if _, ok := toFloat(v); ok {
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// join appends keywords and property names to a dotted path; names that
// are empty or hold a dot are quoted: properties["a.b"].
func join(path string, parts ...string) string {
	var b strings.Builder
	b.WriteString(path)
	for _, p := range parts {
		if p == "" || strings.ContainsAny(p, ".[]\"") {
			b.WriteString("[" + strconv.Quote(p) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

func has(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// copyValue deep-copies a JSON value (maps, lists, scalars).
func copyValue(v any) any { return jsonval.Copy(v, nil) }
