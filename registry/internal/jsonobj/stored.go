package jsonobj

import (
	"bytes"
	"slices"
	"sync"

	"github.com/kapi-dev/kapi/internal/jsonval"
	"github.com/kapi-dev/kapi/rv"
)

// Encode encodes obj in kapi's stored form: apiVersion, kind and
// metadata first (in that order), then the other top-level fields sorted,
// and no metadata.resourceVersion. WithRV relies on this layout. obj gets
// an empty metadata if it has none; its resourceVersion is kept.
func Encode(obj map[string]any) ([]byte, error) {
	meta := metadata(obj)
	rvValue, hadRV := meta["resourceVersion"]
	delete(meta, "resourceVersion")
	defer func() {
		if hadRV {
			meta["resourceVersion"] = rvValue
		}
	}()
	var stack [16]string // most objects' top-level keys: no allocation
	keys := append(stack[:0], "apiVersion", "kind", "metadata")
	for k := range obj {
		if k != "apiVersion" && k != "kind" && k != "metadata" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys[3:])
	// Encoded into a reused buffer, then copied out at its size: one
	// allocation instead of a buffer grown (and copied) to it.
	bp := scratch.Get().(*[]byte)
	buf := append((*bp)[:0], '{')
	defer func() {
		if cap(buf) <= maxScratch {
			*bp = buf[:0]
			scratch.Put(bp)
		}
	}()
	for _, k := range keys {
		v, ok := obj[k]
		if !ok {
			continue
		}
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		buf, _ = jsonval.Append(buf, k) // a string always encodes
		buf = append(buf, ':')
		var err error
		if buf, err = jsonval.Append(buf, v); err != nil {
			return nil, err
		}
	}
	buf = append(buf, '}')
	return bytes.Clone(buf), nil
}

// scratch keeps Encode's buffers; maxScratch is the largest one kept.
var scratch = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

const maxScratch = 256 << 10

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

// AppendRV appends value with its resourceVersion spliced in.
func AppendRV(dst, value []byte, rev uint64) []byte {
	head, tail, ok := rvSplit(value)
	if !ok {
		return append(dst, value...)
	}
	return appendRVTail(append(dst, head...), tail, rev)
}

// appendRVTail appends the resourceVersion member, then the rest of the
// metadata and of the object.
func appendRVTail(dst, tail []byte, rev uint64) []byte {
	dst = append(dst, `"resourceVersion":"`...)
	dst = rv.Append(dst, rev)
	dst = append(dst, '"')
	if len(tail) > 0 && tail[0] != '}' {
		dst = append(dst, ',')
	}
	return append(dst, tail...)
}

// AppendUntypedRV is AppendRV without the value's apiVersion and kind:
// the form of a list item of a built-in kind, which kube encodes without
// them (its typed lists' items carry no TypeMeta). It relies on the
// stored form (Encode): only apiVersion and kind precede metadata.
//
// Worked example: {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}
// at revision 7 becomes {"metadata":{"resourceVersion":"7","name":"a"}}
func AppendUntypedRV(dst, value []byte, rev uint64) []byte {
	_, tail, ok := rvSplit(value)
	if !ok {
		return append(dst, value...)
	}
	dst = append(append(dst, '{'), metaKey...)
	return appendRVTail(dst, tail, rev)
}

// WithRV returns the wire form of a stored value at revision rev.
func WithRV(value []byte, rev uint64) []byte {
	return AppendRV(make([]byte, 0, len(value)+40), value, rev)
}

// DecodeStored decodes a stored value and sets its resourceVersion.
func DecodeStored(value []byte, rev uint64) (map[string]any, error) {
	obj, _, err := Decode(value, false)
	if err != nil {
		return nil, err
	}
	metadata(obj)["resourceVersion"] = rv.Format(rev)
	return obj, nil
}

// metadata is obj's metadata, added if missing.
func metadata(obj map[string]any) map[string]any {
	m, ok := obj["metadata"].(map[string]any)
	if !ok {
		m = map[string]any{}
		obj["metadata"] = m
	}
	return m
}

// MayHaveReplaced reports whether value, written by Encode, may hold a
// string whose invalid UTF-8 was replaced: Encode (as encoding/json)
// writes each invalid byte as the escape \ufffd, and a valid U+FFFD as
// itself, so a value without that escape reads back with the very strings
// it was encoded from. A string holding a backslash then "ufffd" is a
// false positive.
//
//	{"data": {"k": "v\xff"}} → {"data":{"k":"v\ufffd"}} → true
func MayHaveReplaced(value []byte) bool { return bytes.Contains(value, replaced) }

var replaced = []byte(`\ufffd`)
