package cel

import (
	"encoding/json"
	"math"
)

// normalize returns v with numbers in kube's unstructured forms: int64 for
// integers that fit, float64 for everything else (json.Number, int, int32,
// float32, ... are converted). Containers are copied only where something
// changed, so an object already in kube's form is returned as it is and the
// caller's value is never modified. changed reports whether a copy was made.
func normalize(v any) (out any, changed bool) {
	switch t := v.(type) {
	case map[string]any:
		var cp map[string]any
		for k, e := range t {
			n, ch := normalize(e)
			if !ch {
				continue
			}
			if cp == nil {
				cp = make(map[string]any, len(t))
				for k2, e2 := range t {
					cp[k2] = e2
				}
			}
			cp[k] = n
		}
		if cp == nil {
			return t, false
		}
		return cp, true
	case []any:
		var cp []any
		for i, e := range t {
			n, ch := normalize(e)
			if !ch {
				continue
			}
			if cp == nil {
				cp = make([]any, len(t))
				copy(cp, t)
			}
			cp[i] = n
		}
		if cp == nil {
			return t, false
		}
		return cp, true
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i, true
		}
		f, err := t.Float64()
		if err != nil && !math.IsInf(f, 0) {
			return t.String(), true
		}
		return f, true
	case int:
		return int64(t), true
	case int32:
		return int64(t), true
	case int16:
		return int64(t), true
	case int8:
		return int64(t), true
	case uint8:
		return int64(t), true
	case uint16:
		return int64(t), true
	case uint32:
		return int64(t), true
	case uint:
		if uint64(t) <= math.MaxInt64 {
			return int64(t), true
		}
		return float64(t), true
	case uint64:
		if t <= math.MaxInt64 {
			return int64(t), true
		}
		return float64(t), true
	case float32:
		return float64(t), true
	}
	return v, false
}
