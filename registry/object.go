package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/kapi-dev/kapi/internal/jsontree"
	"github.com/kapi-dev/kapi/internal/jsonval"
	"github.com/kapi-dev/kapi/rv"
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
func (o Object) Finalizers() []string {
	l, _ := o.Meta()["finalizers"].([]any)
	out := make([]string, 0, len(l))
	for _, v := range l {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func (o Object) deleting() bool { return o.metaString("deletionTimestamp") != "" }

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

func scalarString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return ""
	case json.Number:
		return v.String()
	case bool:
		if v {
			return "true"
		}
		return "false"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// deepCopy copies a decoded JSON value.
func deepCopy(v any) any { return jsonval.Copy(v, nil) }

func (o Object) deepCopy() Object { return Object(deepCopy(map[string]any(o)).(map[string]any)) }

// errNotObject is returned for bodies that are valid JSON but not an object.
var errNotObject = errors.New("the body must be a JSON object")

// decodeObject decodes a JSON object body.
func decodeObject(b []byte) (Object, error) {
	obj, _, err := decodeJSON(b, false)
	return obj, err
}

// decodeJSON decodes a JSON object body as decodeStd does, and with dups
// its duplicate fields (duplicateFields' answer), in one pass of
// jsontree's decoder. On what jsontree refuses (invalid JSON, data after
// the object, a number out of range, a body that is not an object) it
// answers with decodeStd and duplicateFields: encoding/json's error
// messages, which kapi's 400s quote as kube's do. FuzzDecode holds the
// two paths to the same answers.
func decodeJSON(b []byte, dups bool) (Object, []string, error) {
	v, d, err := jsontree.Decode(b, jsontree.Options{Numbers: jsontree.Exact, Duplicates: dups})
	if m, ok := v.(map[string]any); ok && err == nil {
		return Object(m), d, nil
	}
	obj, err := decodeStd(b)
	if err != nil || !dups {
		return obj, nil, err
	}
	return obj, duplicateFields(b, map[string]any(obj)), nil
}

// decodeStd decodes a JSON object body with encoding/json (Decoder and
// UseNumber): decodeJSON's answer where jsontree's decoder refuses a body.
func decodeStd(b []byte) (Object, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, jsonError(err)
	}
	if len(bytes.TrimLeft(b[d.InputOffset():], " \t\r\n")) > 0 {
		return nil, errors.New("unexpected data after the JSON object")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errNotObject
	}
	if err := checkNumbers(m); err != nil {
		return nil, err
	}
	return Object(m), nil
}

// checkNumbers refuses numbers no client can decode: integers beyond int64
// that are not valid float64s either (such as 1e400).
func checkNumbers(v any) error {
	switch v := v.(type) {
	case map[string]any:
		for _, x := range v {
			if err := checkNumbers(x); err != nil {
				return err
			}
		}
	case []any:
		for _, x := range v {
			if err := checkNumbers(x); err != nil {
				return err
			}
		}
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return nil
		}
		if _, err := v.Float64(); err != nil {
			return fmt.Errorf("number %s is out of range", truncateNumber(v.String()))
		}
	}
	return nil
}

func truncateNumber(s string) string {
	if len(s) > 32 {
		return s[:32] + "..."
	}
	return s
}

func jsonError(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("invalid JSON at byte %d: %v", se.Offset, se)
	}
	return fmt.Errorf("invalid JSON: %v", err)
}

// encodeStored encodes obj in kapi's stored form: apiVersion, kind and
// metadata first (in that order), then the other top-level fields sorted,
// and no metadata.resourceVersion. withRV relies on this layout.
func encodeStored(obj Object) ([]byte, error) {
	meta := obj.Meta()
	rvValue, hadRV := meta["resourceVersion"]
	delete(meta, "resourceVersion")
	defer func() {
		if hadRV {
			meta["resourceVersion"] = rvValue
		}
	}()
	var buf bytes.Buffer
	buf.Grow(512)
	buf.WriteByte('{')
	first := true
	field := func(k string, v any) error {
		if !first {
			buf.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		buf.Write(b)
		return nil
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		if k != "apiVersion" && k != "kind" && k != "metadata" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	keys = append([]string{"apiVersion", "kind", "metadata"}, keys...)
	for _, k := range keys {
		v, ok := obj[k]
		if !ok {
			continue
		}
		if err := field(k, v); err != nil {
			return nil, err
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

var metaKey = []byte(`"metadata":{`)

// rvSplit finds where the resourceVersion goes in a stored value: right
// after the top-level `"metadata":{`. In the stored form only the strings
// apiVersion and kind precede metadata, and a JSON string cannot contain an
// unescaped quote, so the first match is the top-level one.
//
// Worked example: {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}
// at revision 7 becomes
// {"apiVersion":"v1","kind":"ConfigMap","metadata":{"resourceVersion":"7","name":"a"}}
func rvSplit(value []byte) (head, tail []byte, ok bool) {
	i := bytes.Index(value, metaKey)
	if i < 0 {
		return nil, nil, false
	}
	i += len(metaKey)
	return value[:i], value[i:], true
}

// appendRV appends value with its resourceVersion spliced in.
func appendRV(dst, value []byte, rev uint64) []byte {
	head, tail, ok := rvSplit(value)
	if !ok {
		return append(dst, value...)
	}
	dst = append(dst, head...)
	dst = append(dst, `"resourceVersion":"`...)
	dst = rv.Append(dst, rev)
	dst = append(dst, '"')
	if len(tail) > 0 && tail[0] != '}' {
		dst = append(dst, ',')
	}
	return append(dst, tail...)
}

// withRV returns the wire form of a stored value at revision rev.
func withRV(value []byte, rev uint64) []byte {
	return appendRV(make([]byte, 0, len(value)+40), value, rev)
}

// decodeStored decodes a stored value and sets its resourceVersion.
func decodeStored(value []byte, rev uint64) (Object, error) {
	obj, err := decodeObject(value)
	if err != nil {
		return nil, err
	}
	obj.Meta()["resourceVersion"] = rv.Format(rev)
	return obj, nil
}
