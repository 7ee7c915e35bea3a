package schema

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi/internal/jsonval"
	"github.com/kapi-dev/kapi/internal/validation"
)

// sameJSON is reflect.DeepEqual of the values kube decodes: integers and
// floats differ even when equal in value.
func sameJSON(a, b any) bool {
	if n, ok := number(a); ok {
		a = n
	}
	if n, ok := number(b); ok {
		b = n
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, e := range x {
			f, ok := y[k]
			if !ok || !sameJSON(e, f) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// enum is kube-openapi's basicCommonValidator: the value, converted to
// the Go type of an allowed value, must equal it. kube reads a CRD's enum
// values as it reads objects (integers int64, other numbers float64), and
// Go's conversions truncate a float to an integer and make a rune of an
// integer converted to a string, so 1.5 matches enum [1] and 97 matches
// enum ["a"].
func (v *validator) enum(s *Schema, x any) {
	if len(s.Enum) == 0 {
		return
	}
	for _, e := range s.Enum {
		if enumMatch(x, e) {
			return
		}
	}
	allowed := make([]string, len(s.Enum))
	for i, e := range s.Enum {
		if str, ok := e.(string); ok {
			allowed[i] = strconv.Quote(str)
		} else {
			b, _ := json.Marshal(jsonval.Copy(e, kubeValue)) // numbers as kube decodes them
			allowed[i] = strconv.Quote(string(b))
		}
	}
	v.errs = append(v.errs, FieldError{Type: validation.TypeNotSupported, Field: fieldOf(v.at()), Value: x,
		Detail: "supported values: " + strings.Join(allowed, ", ")})
}

func enumMatch(x, e any) bool {
	if x == nil || e == nil {
		return false
	}
	switch ev := kubeValue(e).(type) {
	case int64:
		switch n := x.(type) {
		case int64:
			return n == ev
		case float64:
			return int64(n) == ev
		}
		return false
	case float64:
		switch n := x.(type) {
		case int64:
			return float64(n) == ev
		case float64:
			return n == ev
		}
		return false
	case string:
		switch n := x.(type) {
		case string:
			return n == ev
		case int64:
			return string(rune(n)) == ev
		}
		return false
	case bool:
		b, ok := x.(bool)
		return ok && b == ev
	case map[string]any:
		_, ok := x.(map[string]any)
		return ok && sameJSON(x, ev)
	case []any:
		_, ok := x.([]any)
		return ok && sameJSON(x, ev)
	}
	return false
}
