package gojson

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi/schema"
)

// TypeError is encoding/json's UnmarshalTypeError as it prints.
type TypeError struct {
	Value  string // "number", "number 1.5", "string", "bool", "array", "object"
	Type   string // the Go type, "map[string]string"
	Struct string // the innermost Go struct's name, "ObjectMeta"
	Field  string // the JSON field names from the root, "metadata.labels"
}

func (e *TypeError) Error() string {
	if e.Struct != "" || e.Field != "" {
		return "json: cannot unmarshal " + e.Value + " into Go struct field " + e.Struct + "." + e.Field + " of type " + e.Type
	}
	return "json: cannot unmarshal " + e.Value + " into Go value of type " + e.Type
}

// Check returns the error encoding/json reports decoding a JSON document
// into the Go type s describes, nil when s's types accept it. obj is the
// document decoded (numbers as json.Number), walked first; body returns
// the document's text, read again only when obj has an error, to find the
// first in document order.
//
// apiVersion and kind at the root are not checked: kube reads them before
// (its decoder's first pass), with other errors.
func Check(s *schema.Schema, obj any, body func() ([]byte, error)) error {
	var c checker
	if c.value(s, obj, context{}); c.err == nil {
		return nil
	}
	b, err := body()
	if err != nil {
		return c.err
	}
	ordered, err := parseOrdered(b)
	if err != nil {
		return c.err // not reached for a body obj was decoded from
	}
	c = checker{}
	c.value(s, ordered, context{})
	return c.err
}

// member is one field of an object, in document order.
type member struct {
	key string
	val any
}

// object is a JSON object with its fields in document order.
type object []member

func parseOrdered(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return parseValue(d)
}

func parseValue(d *json.Decoder) (any, error) {
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	delim, ok := t.(json.Delim)
	if !ok {
		return t, nil
	}
	switch delim {
	case '{':
		o := object{}
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return nil, err
			}
			v, err := parseValue(d)
			if err != nil {
				return nil, err
			}
			key, _ := k.(string)
			o = append(o, member{key, v})
		}
		_, err = d.Token()
		return o, err
	case '[':
		a := []any{}
		for d.More() {
			v, err := parseValue(d)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err = d.Token()
		return a, err
	}
	return nil, fmt.Errorf("gojson: unexpected %v", delim)
}

// context is encoding/json's errorContext: the innermost struct and the
// JSON field names that lead to the value.
type context struct {
	structName string
	fields     []string
}

func (c context) field(structName, name string) context {
	return context{structName: structName, fields: append(c.fields[:len(c.fields):len(c.fields)], name)}
}

// checker keeps the first error, as encoding/json's saveError.
type checker struct{ err error }

func (c *checker) fail(ctx context, value string, s *schema.Schema) {
	if c.err != nil {
		return
	}
	c.err = &TypeError{Value: value, Type: goType(s), Struct: ctx.structName, Field: strings.Join(ctx.fields, ".")}
}

// opaque tells a node whose Go type reads itself or is unknown.
func opaque(s *schema.Schema) bool {
	if s == nil || s.IntOrString || s.Format == "date-time" || s.Format == "int-or-string" {
		return true
	}
	switch s.Type {
	case "string", "boolean", "integer", "number":
		return false
	case "array":
		return s.Items == nil
	case "object":
		if len(s.Properties) > 0 {
			return s.GoType == ""
		}
		return s.AdditionalProperties == nil
	}
	return true
}

// goType is the Go type s stands for, as reflect prints it.
func goType(s *schema.Schema) string {
	switch s.Type {
	case "string":
		if s.Format == "byte" {
			return "[]uint8"
		}
		return "string"
	case "boolean":
		return "bool"
	case "integer":
		if s.Format == "int32" {
			return "int32"
		}
		return "int64"
	case "number":
		if s.Format == "float" {
			return "float32"
		}
		return "float64"
	case "array":
		return "[]" + goType(s.Items)
	case "object":
		if s.GoType != "" {
			return s.GoType
		}
		if s.AdditionalProperties != nil {
			return "map[string]" + goType(s.AdditionalProperties)
		}
	}
	return "interface {}"
}

// jsonKind is how encoding/json names a JSON value's type.
func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "bool"
	case json.Number, float64, int64:
		return "number"
	case []any:
		return "array"
	}
	return "object"
}

func (c *checker) value(s *schema.Schema, v any, ctx context) {
	if v == nil || c.err != nil || opaque(s) {
		return // null leaves any Go value as it is
	}
	switch s.Type {
	case "string":
		str, ok := v.(string)
		switch {
		case !ok:
			c.fail(ctx, jsonKind(v), s)
		case s.Format == "byte":
			if _, err := base64.StdEncoding.DecodeString(str); err != nil {
				c.err = err // encoding/json saves base64's error as it is
			}
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			c.fail(ctx, jsonKind(v), s)
		}
	case "integer", "number":
		c.number(s, v, ctx)
	case "array":
		l, ok := v.([]any)
		if !ok {
			c.fail(ctx, jsonKind(v), s)
			return
		}
		for _, e := range l {
			c.value(s.Items, e, ctx)
		}
	case "object":
		c.object(s, v, ctx)
	}
}

func (c *checker) number(s *schema.Schema, v any, ctx context) {
	n, ok := v.(json.Number)
	if !ok {
		if jsonKind(v) != "number" {
			c.fail(ctx, jsonKind(v), s)
		}
		return
	}
	lit := string(n)
	var err error
	switch goType(s) {
	case "int32":
		_, err = strconv.ParseInt(lit, 10, 32)
	case "int64":
		_, err = strconv.ParseInt(lit, 10, 64)
	case "float32":
		_, err = strconv.ParseFloat(lit, 32)
	default:
		_, err = strconv.ParseFloat(lit, 64)
	}
	if err != nil {
		c.fail(ctx, "number "+lit, s)
	}
}

func (c *checker) object(s *schema.Schema, v any, ctx context) {
	each := func(f func(k string, v any)) bool {
		switch o := v.(type) {
		case map[string]any:
			for k, e := range o {
				f(k, e)
			}
		case object:
			for _, m := range o {
				f(m.key, m.val)
			}
		default:
			return false
		}
		return true
	}
	if len(s.Properties) == 0 { // a map
		if !each(func(_ string, e any) { c.value(s.AdditionalProperties, e, ctx) }) {
			c.fail(ctx, jsonKind(v), s)
		}
		return
	}
	name := s.GoType[strings.LastIndexByte(s.GoType, '.')+1:]
	if !each(func(k string, e any) {
		if len(ctx.fields) == 0 && (k == "apiVersion" || k == "kind") {
			return
		}
		if p, ok := s.Properties[k]; ok {
			c.value(p, e, ctx.field(name, k))
		}
	}) {
		c.fail(ctx, jsonKind(v), s)
	}
}
