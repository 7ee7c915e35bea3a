package patch

import (
	"encoding/json"
	"slices"

	"github.com/kapi-dev/kapi/schema"
)

// Kube's field manager records a create as an update from the zero value
// of the kind's Go type (scope.Creater.New), converted to unstructured:
// that value already holds every non-pointer struct field (as {}, with
// what it holds in turn) and every field Go's JSON writes without
// omitempty (as null). Those fields are not "added" by the create, so
// their paths are not members of the manager's set: managedFields show
// no "." for them. For a Deployment:
//
//	zero:   {"metadata": {}, "spec": {"selector": null, "strategy": {},
//	         "template": {"metadata": {}, "spec": {"containers": null}}},
//	         "status": {}}
//	create: f:spec has no ".", nor f:strategy, f:template, its f:metadata
//	        and f:spec, nor f:containers; f:rollingUpdate (a pointer) and
//	        f:labels (a map) have one.
//
// kube's OpenAPI marks the non-pointer struct fields with default {} and
// lists the fields without omitempty as required: typedZero reads both.
// Custom resources have no Go type: their field manager starts from an
// empty object.

// typedZero is the zero value of the typed object s describes, as above.
func typedZero(s *schema.Schema) map[string]any {
	return zeroOf(s, 0)
}

func zeroOf(s *schema.Schema, depth int) map[string]any {
	out := map[string]any{}
	if s == nil || depth > 16 {
		return out
	}
	for name, p := range s.Properties {
		if p == nil {
			continue
		}
		switch d := p.Default.(type) {
		case map[string]any:
			if len(d) == 0 {
				out[name] = zeroOf(p, depth+1)
				continue
			}
		case string, bool, json.Number, float64, int64:
			// A scalar default that is its type's zero value marks a
			// non-pointer field: zero holds it.
			if isZeroScalar(d) {
				out[name] = d
				continue
			}
		}
		if slices.Contains(s.Required, name) {
			out[name] = nil
		}
	}
	return out
}

func isZeroScalar(v any) bool {
	switch x := v.(type) {
	case string:
		return x == ""
	case bool:
		return !x
	case json.Number:
		f, err := x.Float64()
		return err == nil && f == 0
	case float64:
		return x == 0
	case int64:
		return x == 0
	}
	return false
}

// withZero is a copy of zero with live's fields set over it.
func withZero(live, zero map[string]any) map[string]any {
	out := deepCopyMap(zero)
	for k, v := range live {
		out[k] = v
	}
	return out
}

func deepCopyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			v = deepCopyMap(sub)
		}
		out[k] = v
	}
	return out
}

// dropZero removes from fields (a create's fieldsV1 trie of obj) what a
// comparison with zero would not have added: the "." of a field zero
// holds, the field itself when obj holds it as zero does (an empty
// struct, a zero scalar, or null), and every null field: a typed object
// holds null only where its type's zero value does (a non-pointer
// metav1.Time, a nil slice without omitempty).
func dropZero(fields, zero, obj map[string]any) {
	dropNulls(fields, obj)
	dropZeroFields(fields, zero, obj)
}

func dropNulls(fields, obj map[string]any) {
	for k, v := range obj {
		key := "f:" + k
		f, ok := fields[key].(map[string]any)
		if !ok {
			continue
		}
		switch x := v.(type) {
		case nil:
			if len(f) == 0 {
				delete(fields, key)
			}
		case map[string]any:
			dropNulls(f, x)
		}
	}
}

func dropZeroFields(fields, zero, obj map[string]any) {
	for k, z := range zero {
		key := "f:" + k
		f, ok := fields[key].(map[string]any)
		if !ok {
			continue
		}
		v := obj[k]
		if len(f) == 0 {
			zm, isMap := z.(map[string]any)
			if (isMap && isEmptyMap(v) && len(zm) == 0) || (z == nil && v == nil) || (!isMap && z != nil && isZeroScalar(z) && isZeroScalar(v) && sameKind(z, v)) {
				delete(fields, key)
			}
			continue
		}
		delete(f, ".")
		if zm, ok := z.(map[string]any); ok {
			if vm, ok := v.(map[string]any); ok {
				dropZeroFields(f, zm, vm)
			}
		}
		if len(f) == 0 {
			delete(fields, key)
		}
	}
}

// sameKind reports whether two zero scalars are of one JSON type.
func sameKind(a, b any) bool {
	_, as := a.(string)
	_, bs := b.(string)
	_, ab := a.(bool)
	_, bb := b.(bool)
	return as == bs && ab == bb
}

func isEmptyMap(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}
