package jsonval

import (
	"encoding/json"
	"strconv"
)

// Copy returns a deep copy of v, with leaf applied to every scalar (nil
// keeps scalars as they are). Maps and slices of the copy share nothing
// with v.
func Copy(v any, leaf func(any) any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = Copy(e, leaf)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, e := range v {
			l[i] = Copy(e, leaf)
		}
		return l
	}
	if leaf == nil {
		return v
	}
	return leaf(v)
}

// Convert applies leaf to every scalar of v in place and returns v's
// root (itself unless v is a scalar).
func Convert(v any, leaf func(any) any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = Convert(e, leaf)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = Convert(e, leaf)
		}
		return v
	}
	return leaf(v)
}

// Number is a leaf for Copy and Convert: a json.Number becomes an int64
// when it is an integer that fits and a float64 otherwise (±Inf beyond
// float64's range), as apimachinery's unstructured decoding and
// structured-merge-diff have numbers; other scalars are kept.
func Number(v any) any {
	n, ok := v.(json.Number)
	if !ok {
		return v
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i
	}
	f, _ := strconv.ParseFloat(string(n), 64) // a JSON number always parses
	return f
}

// Scalar is v's text as field selectors and Table string cells compare
// it: a string as is, null as "", a number or bool as its JSON, and
// anything else as its JSON encoding.
func Scalar(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return ""
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
