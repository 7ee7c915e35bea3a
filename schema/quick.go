package schema

import (
	"math"
	"unicode/utf8"
)

// The checks of structural.go walk the whole object, building the field
// path of every value and sorting the keys of every map, to report their
// errors in kube's order; most objects have none. The quick checks here
// walk it without allocating and answer whether the full check can be
// skipped: true only when it would certainly report nothing.

// embeddedErrors is embedded(s, x, ""), skipped when no value of x has
// an x-kubernetes-embedded-resource schema.
func embeddedErrors(s *Schema, x any) []FieldError {
	if !hasEmbedded(s, x) {
		return nil
	}
	return embedded(s, x, "")
}

// hasEmbedded reports whether embedded(s, x, …) reaches a value whose
// schema is an embedded resource.
func hasEmbedded(s *Schema, x any) bool {
	if s == nil {
		return false
	}
	switch t := x.(type) {
	case map[string]any:
		if s.EmbeddedResource {
			return true
		}
		for k, e := range t {
			if p, ok := s.Properties[k]; ok {
				if hasEmbedded(p, e) {
					return true
				}
			} else if s.AdditionalProperties != nil && hasEmbedded(s.AdditionalProperties, e) {
				return true
			}
		}
	case []any:
		for _, e := range t {
			if hasEmbedded(s.Items, e) {
				return true
			}
		}
	}
	return false
}

// listErrors is listSetsAndMaps(s, x, ""), skipped when listsOK.
func listErrors(s *Schema, x any) []FieldError {
	if listsOK(s, x) {
		return nil
	}
	return listSetsAndMaps(s, x, "")
}

// quickKeys bounds the keys (one per item of a set, len(ListMapKeys) per
// item of a list-type map) that listsOK compares pair by pair.
const quickKeys = 64

// listsOK reports that listSetsAndMaps(s, x, …) finds nothing: it walks
// as listSetsAndMaps does and returns false on a duplicate, and on
// anything it does not decide itself (a long list, a set or map key
// that is not a scalar).
func listsOK(s *Schema, x any) bool {
	if s == nil {
		return true
	}
	switch t := x.(type) {
	case map[string]any:
		for k, e := range t {
			if s.AdditionalProperties != nil && !listsOK(s.AdditionalProperties, e) {
				return false
			}
			if p, ok := s.Properties[k]; ok && !listsOK(p, e) {
				return false
			}
		}
	case []any:
		switch s.ListType {
		case "set":
			if !uniqueSet(t) {
				return false
			}
		case "map":
			if !uniqueMapKeys(s, t) {
				return false
			}
		}
		if s.Items != nil {
			for _, e := range t {
				if !listsOK(s.Items, e) {
					return false
				}
			}
		}
	}
	return true
}

// uniqueSet reports that duplicates(l) is empty, for short lists of
// scalars.
func uniqueSet(l []any) bool {
	if len(l) <= 1 {
		return true
	}
	if len(l) > quickKeys {
		return false
	}
	var buf [quickKeys]itemKey
	keys := buf[:len(l)]
	for i, x := range l {
		var ok bool
		if keys[i], ok = toItemKey(x, false); !ok {
			return false
		}
	}
	return unique(keys, 1, false)
}

// uniqueMapKeys reports that listMap(s, l, …) finds nothing, for short
// lists of objects whose keys are scalars.
func uniqueMapKeys(s *Schema, l []any) bool {
	for _, x := range l {
		if _, ok := x.(map[string]any); x != nil && !ok {
			return false
		}
	}
	if len(l) <= 1 {
		return true
	}
	n := len(s.ListMapKeys)
	if n == 0 || len(l)*n > quickKeys {
		return false
	}
	asJSON := n > 1
	var buf [quickKeys]itemKey
	keys := buf[:len(l)*n]
	for i, x := range l {
		m, _ := x.(map[string]any)
		for j, f := range s.ListMapKeys {
			v, present := m[f]
			if !present {
				keys[i*n+j] = itemKey{kind: 'u'}
				continue
			}
			var ok bool
			if keys[i*n+j], ok = toItemKey(v, asJSON); !ok {
				return false
			}
		}
	}
	return unique(keys, n, asJSON)
}

// unique reports that no two runs of n keys are the same, pair by pair;
// false too when a pair is one it does not decide.
func unique(keys []itemKey, n int, asJSON bool) bool {
	for i := n; i < len(keys); i += n {
		for j := 0; j < i; j += n {
			same := true
			for k := range n {
				eq, ok := keys[i+k].same(keys[j+k], asJSON)
				if !ok {
					return false
				}
				same = same && eq
			}
			if same {
				return false
			}
		}
	}
	return true
}

// itemKey is a scalar as kube decodes it, or a missing map key ('u').
type itemKey struct {
	kind byte // 'u', 'n' (null), 's', 'b', 'i' (int64), 'f' (float64)
	s    string
	i    int64
	f    float64
}

// toItemKey is x as kube decodes it, if it is a scalar whose identity
// (with asJSON its JSON encoding) same decides: not a NaN or infinite
// float64 (which JSON does not encode), nor asJSON a string that is not
// valid UTF-8 (which encoding/json changes).
func toItemKey(x any, asJSON bool) (itemKey, bool) {
	switch t := kubeValue(x).(type) {
	case nil:
		return itemKey{kind: 'n'}, true
	case string:
		return itemKey{kind: 's', s: t}, !asJSON || utf8.ValidString(t)
	case bool:
		if t {
			return itemKey{kind: 'b', i: 1}, true
		}
		return itemKey{kind: 'b'}, true
	case int64:
		return itemKey{kind: 'i', i: t}, true
	case float64:
		return itemKey{kind: 'f', f: t}, !math.IsNaN(t) && !math.IsInf(t, 0)
	}
	return itemKey{}, false
}

// same reports whether a and b have the same identity (as set items and
// single map keys) or with asJSON the same JSON encoding (as the values
// of several map keys); ok is false for an int64 and a float64 asJSON,
// whose encodings may or may not be the same.
func (a itemKey) same(b itemKey, asJSON bool) (same, ok bool) {
	if a.kind != b.kind {
		return false, !asJSON || a.kind+b.kind != 'i'+'f'
	}
	switch a.kind {
	case 's':
		return a.s == b.s, true
	case 'f':
		return math.Float64bits(a.f) == math.Float64bits(b.f), true // -0 is not 0
	}
	return a.i == b.i, true
}
