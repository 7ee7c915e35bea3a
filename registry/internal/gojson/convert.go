package gojson

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi/schema"
)

// FromUnstructured returns the error apimachinery's
// runtime.DefaultUnstructuredConverter reports converting obj (JSON
// decoded with numbers as json.Number) into the Go type s describes, nil
// when it converts: kube converts a strategic merge patch's result so, and
// answers its error. Its rules, unlike encoding/json's: an integer is an
// int64 and any other number a float64, which convert between numeric
// kinds (a float64 only when integral); a string, bool or integer of the
// wrong kind is "cannot convert int64 to string" where Go could convert
// it, "unrecognized type: int32" where it could not; a container of the
// wrong kind is "cannot restore slice from string", "cannot restore map
// from slice", "cannot restore struct from: bool". The first error stops
// the conversion: struct fields are taken in name order (kube takes them
// in Go field order; a single error is the same), list items in order.
// Nodes Check leaves alone (int-or-string, date-time, opaque objects)
// convert with their own rules and are not checked.
//
// Worked example, on a Deployment's schema:
//
//	{"spec": {"replicas": "x"}} → unrecognized type: int32
//	{"metadata": {"labels": {"a": 1}}} → cannot convert int64 to string
func FromUnstructured(s *schema.Schema, obj any) error {
	return fromUnstructured(s, obj, true)
}

func fromUnstructured(s *schema.Schema, v any, root bool) error {
	if v == nil || opaque(s) {
		return nil
	}
	switch s.Type {
	case "string", "boolean", "integer", "number":
		if s.Format == "byte" { // []byte: a string is base64
			if _, ok := v.(string); ok {
				return nil
			}
			return fmt.Errorf("cannot restore slice from %s", unstructuredKind(v))
		}
		return convertSimple(s, v)
	case "array":
		l, ok := v.([]any)
		if !ok {
			return fmt.Errorf("cannot restore slice from %s", unstructuredKind(v))
		}
		for _, e := range l {
			if err := fromUnstructured(s.Items, e, false); err != nil {
				return err
			}
		}
		return nil
	}
	m, ok := v.(map[string]any)
	if len(s.Properties) == 0 { // a map
		if !ok {
			return fmt.Errorf("cannot restore map from %s", unstructuredKind(v))
		}
		for _, k := range slices.Sorted(mapsKeys(m)) {
			if err := fromUnstructured(s.AdditionalProperties, m[k], false); err != nil {
				return err
			}
		}
		return nil
	}
	if !ok {
		return fmt.Errorf("cannot restore struct from: %s", unstructuredKind(v))
	}
	for _, k := range slices.Sorted(mapsKeys(s.Properties)) {
		if root && (k == "apiVersion" || k == "kind") {
			continue
		}
		if err := fromUnstructured(s.Properties[k], m[k], false); err != nil {
			return err
		}
	}
	return nil
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// convertSimple is the converter's rule for a bool, number or string Go
// type (s) given the unstructured value v.
func convertSimple(s *schema.Schema, v any) error {
	dt := goType(s)
	st := unstructuredKind(v)
	dtKind := dt // reflect.Kind's name: the schema's types are unnamed
	switch {
	case st == dt, st == "int64" && isNumeric(dt), st == "float64" && isFloat(dt):
		return nil
	case st == "float64" && isNumeric(dt):
		if f, err := v.(json.Number).Float64(); err == nil && f == math.Trunc(f) {
			return nil
		}
		return fmt.Errorf("cannot convert %s to %s", st, dt)
	case st == "int64" && dt == "string":
		return fmt.Errorf("cannot convert %s to %s", st, dt) // Go converts an integer to a string (a rune)
	}
	return fmt.Errorf("unrecognized type: %s", dtKind)
}

func isNumeric(t string) bool {
	return t == "int32" || t == "int64" || isFloat(t)
}

func isFloat(t string) bool { return t == "float32" || t == "float64" }

// unstructuredKind is the kind of Go value kube's unstructured JSON holds
// for v: an integer is an int64, any other number a float64.
func unstructuredKind(v any) string {
	switch x := v.(type) {
	case string:
		return "string"
	case bool:
		return "bool"
	case json.Number:
		if _, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return "int64"
		}
		return "float64"
	case []any:
		return "slice"
	}
	return "map"
}

// Sprint is fmt.Sprintf("%+v") of an unstructured JSON value as kube holds
// it (integers as int64, other numbers as float64): kube quotes a strategic
// merge patch so when its result does not convert.
//
//	{"spec":{"replicas":"x","ports":[80,1.5]}} → map[spec:map[ports:[80 1.5] replicas:x]]
func Sprint(v any) string {
	var b strings.Builder
	sprint(&b, v)
	return b.String()
}

func sprint(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("<nil>")
	case string:
		b.WriteString(x)
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			b.WriteString(strconv.FormatInt(i, 10))
		} else if f, err := x.Float64(); err == nil {
			b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
		} else {
			b.WriteString(string(x))
		}
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(' ')
			}
			sprint(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteString("map[")
		for i, k := range slices.Sorted(mapsKeys(x)) {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(k)
			b.WriteByte(':')
			sprint(b, x[k])
		}
		b.WriteByte(']')
	default:
		fmt.Fprintf(b, "%+v", x)
	}
}
