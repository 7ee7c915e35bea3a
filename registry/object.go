package registry

import (
	"strings"

	"github.com/kapi-dev/kapi/internal/jsonval"
	"github.com/kapi-dev/kapi/registry/internal/jsonobj"
)

// Object is a decoded Kubernetes object: the JSON object as a map, with
// numbers kept as json.Number so they round-trip exactly.
type Object map[string]any

// Meta returns the metadata map, creating it if absent.
func (o Object) Meta() map[string]any {
	m, ok := o["metadata"].(map[string]any)
	if !ok {
		m = map[string]any{}
		o["metadata"] = m
	}
	return m
}

func (o Object) metaString(k string) string {
	m, _ := o["metadata"].(map[string]any)
	s, _ := m[k].(string)
	return s
}

// Name, Namespace and UID read metadata.
func (o Object) Name() string      { return o.metaString("name") }
func (o Object) Namespace() string { return o.metaString("namespace") }
func (o Object) UID() string       { return o.metaString("uid") }

// Labels returns metadata.labels as strings (non-strings are skipped;
// validation rejects them).
func (o Object) Labels() map[string]string { return stringMap(o.Meta()["labels"]) }

// Finalizers returns metadata.finalizers.
func (o Object) Finalizers() []string { return stringList(o.Meta()["finalizers"]) }

func (o Object) deleting() bool { return o.metaString("deletionTimestamp") != "" }

// stringList is the strings of a JSON list (other items are skipped).
func stringList(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func stringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// lookup reads a dotted path such as "spec.color" or ".spec.replicas".
func (o Object) lookup(path string) (any, bool) {
	var cur any = map[string]any(o)
	for _, p := range strings.Split(strings.TrimPrefix(path, "."), ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// set writes a dotted path, creating maps on the way.
func (o Object) set(path string, v any) {
	parts := strings.Split(strings.TrimPrefix(path, "."), ".")
	m := map[string]any(o)
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
}

// deepCopy copies a decoded JSON value.
func deepCopy(v any) any { return jsonval.Copy(v, nil) }

func (o Object) deepCopy() Object { return Object(deepCopy(map[string]any(o)).(map[string]any)) }

// decodeObject decodes a JSON object body (package jsonobj).
func decodeObject(b []byte) (Object, error) {
	m, _, err := jsonobj.Decode(b, false)
	return Object(m), err
}

// decodeJSON decodes a JSON object body, and with dups its duplicate
// fields (jsonobj.Decode).
func decodeJSON(b []byte, dups bool) (Object, []string, error) {
	m, d, err := jsonobj.Decode(b, dups)
	return Object(m), d, err
}

// decodeStored decodes a stored value and sets its resourceVersion
// (jsonobj.DecodeStored).
func decodeStored(value []byte, rev uint64) (Object, error) {
	m, err := jsonobj.DecodeStored(value, rev)
	return Object(m), err
}
