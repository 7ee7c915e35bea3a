package patch

import (
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
		if d, ok := p.Default.(map[string]any); ok && len(d) == 0 {
			out[name] = zeroOf(p, depth+1)
			continue
		}
		if slices.Contains(s.Required, name) {
			out[name] = nil
		}
	}
	return out
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
// holds, and the field itself when obj holds it as zero does (an empty
// struct, or null).
func dropZero(fields, zero, obj map[string]any) {
	for k, z := range zero {
		key := "f:" + k
		f, ok := fields[key].(map[string]any)
		if !ok {
			continue
		}
		v := obj[k]
		if len(f) == 0 {
			if zm, ok := z.(map[string]any); (ok && isEmptyMap(v) && len(zm) == 0) || (z == nil && v == nil) {
				delete(fields, key)
			}
			continue
		}
		delete(f, ".")
		if zm, ok := z.(map[string]any); ok {
			if vm, ok := v.(map[string]any); ok {
				dropZero(f, zm, vm)
			}
		}
		if len(f) == 0 {
			delete(fields, key)
		}
	}
}

func isEmptyMap(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}
