package builtin

import (
	"encoding/json"
	"reflect"
	"strconv"

	"github.com/kapi-dev/kapi/registry"
)

// Helpers on the JSON form of objects (map[string]any, []any, string,
// bool, json.Number), which the strategies read and default in place.

// get is the value at path, or nil.
func get(v any, path ...string) any {
	if o, ok := v.(registry.Object); ok {
		v = map[string]any(o)
	}
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func getMap(v any, path ...string) map[string]any {
	m, _ := get(v, path...).(map[string]any)
	return m
}

func getList(v any, path ...string) []any {
	l, _ := get(v, path...).([]any)
	return l
}

func getString(v any, path ...string) string {
	s, _ := get(v, path...).(string)
	return s
}

// ensureMap is the object at path, made (with every object above it)
// when missing.
func ensureMap(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	return m
}

// def sets m[key] to v when it is missing or null.
func def(m map[string]any, key string, v any) {
	if m == nil {
		return
	}
	if cur, ok := m[key]; !ok || cur == nil {
		m[key] = v
	}
}

func num(n int64) json.Number { return json.Number(strconv.FormatInt(n, 10)) }

// maps is every object of the list at path.
func maps(v any, path ...string) []map[string]any {
	var out []map[string]any
	for _, e := range getList(v, path...) {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// equal compares JSON values.
func equal(a, b any) bool { return reflect.DeepEqual(a, b) }

// clone deep-copies a JSON value.
func clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = clone(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = clone(e)
		}
		return l
	}
	return v
}

// stringMap is a JSON object of strings.
func stringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := make(map[string]string, len(m))
	for k, e := range m {
		if s, ok := e.(string); ok {
			out[k] = s
		}
	}
	return out
}

// obj is the registry's object as a plain map.
func obj(o registry.Object) map[string]any { return map[string]any(o) }
