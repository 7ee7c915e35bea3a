package protobuf

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// maxDepth bounds message nesting in Marshal and Unmarshal, as protobuf-go
// bounds its own recursion.
const maxDepth = 10000

// Marshal encodes obj, an object in JSON form, as the message md describes.
//
// Each field is looked up by its proto name in obj; keys with no field are
// dropped. Scalars are written when non-zero, and zeros too for fields with
// explicit presence (proto3 optional, proto2); lists and maps in field and
// key order, so the output is deterministic. A value of the wrong JSON type
// is an [*Error] (wrapping [ErrInvalid]) naming its path:
//
//	data.a: expected string, got number
//
// Values are the JSON form: map[string]any, []any, string, bool, nil and
// numbers as json.Number, int64, int or float64; []string and
// map[string]string are taken too.
func Marshal(md protoreflect.MessageDescriptor, obj map[string]any) ([]byte, error) {
	bp := bufPool.Get().(*[]byte)
	b, err := table(md).built().appendObject((*bp)[:0], obj, 0)
	if err != nil {
		bufPool.Put(bp)
		return nil, err
	}
	out := append([]byte(nil), b...)
	if cap(b) <= maxPooled {
		*bp = b
		bufPool.Put(bp)
	}
	return out, nil
}

// MarshalEnvelope is AppendEnvelope(nil, tm, Marshal(md, obj)) in one
// allocation of the body's size: a whole response body for one object.
// raw, the message's bytes, is a sub-slice of body (a list item or a
// watch event frames it anew):
//
//	body = Magic, Unknown{typeMeta: tm, raw: raw, contentEncoding: "", contentType: ""}
func MarshalEnvelope(md protoreflect.MessageDescriptor, tm TypeMeta, obj map[string]any) (body, raw []byte, err error) {
	bp := bufPool.Get().(*[]byte)
	b, perr := table(md).built().appendObject((*bp)[:0], obj, 0)
	if perr != nil {
		bufPool.Put(bp)
		return nil, nil, perr
	}
	if len(b) == 0 {
		b = nil // as Marshal returns an empty message: no raw field
	}
	body = AppendEnvelope(nil, tm, b)
	// raw is written after Magic, the TypeMeta field and raw's own tag
	// and length.
	if b != nil {
		at := len(Magic) + sizeString(sizeTypeMeta(tm)) + sizeString(len(b)) - len(b)
		raw = body[at : at+len(b) : at+len(b)]
	}
	if cap(b) <= maxPooled {
		*bp = b
		bufPool.Put(bp)
	}
	return body, raw, nil
}

// bufPool holds Marshal's scratch buffers: the message is built in one and
// copied out at its exact size, so growing the buffer costs nothing after
// the first calls.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// maxPooled is the largest scratch buffer kept for reuse.
const maxPooled = 1 << 20

func (m *message) appendObject(dst []byte, obj map[string]any, depth int) ([]byte, *Error) {
	if depth > maxDepth {
		return nil, invalidf("nested too deeply")
	}
	if m.byName != nil && sparse*len(obj) <= len(m.fields) {
		return m.appendSparse(dst, obj, depth)
	}
	return m.appendDense(dst, obj, depth)
}

// appendDense is appendObject visiting the message's fields.
func (m *message) appendDense(dst []byte, obj map[string]any, depth int) ([]byte, *Error) {
	for _, f := range m.fields {
		if f.inline {
			var err *Error
			if dst, err = f.appendInline(dst, obj, depth); err != nil {
				return nil, err
			}
			continue
		}
		v, ok := obj[f.name]
		if !ok {
			continue
		}
		var err *Error
		if dst, err = f.append(dst, v, depth); err != nil {
			return nil, err.under(f.name)
		}
	}
	return dst, nil
}

// sparse is how many times fewer keys than fields an object has for
// appendObject to visit its keys rather than the message's fields (a
// PodSpec has 40 fields and often 2 keys).
const sparse = 4

// appendSparse is appendObject visiting obj's keys: the fields they name,
// in field order, then written as appendObject writes them.
func (m *message) appendSparse(dst []byte, obj map[string]any, depth int) ([]byte, *Error) {
	var stack [16]int
	at := stack[:0]
	for k := range obj {
		if i, ok := m.byName[k]; ok {
			at = append(at, i)
		}
	}
	slices.Sort(at)
	for _, i := range at {
		f := m.fields[i]
		var err *Error
		if dst, err = f.append(dst, obj[f.name], depth); err != nil {
			return nil, err.under(f.name)
		}
	}
	return dst, nil
}

// appendInline writes an inline field (see [InlinePrefix]) from obj, the
// parent's object.
func (f *field) appendInline(dst []byte, obj map[string]any, depth int) ([]byte, *Error) {
	dst = protowire.AppendTag(dst, f.num, protowire.BytesType)
	start := len(dst)
	dst = append(dst, 0)
	dst, err := f.msg.built().appendObject(dst, obj, depth+1)
	if err != nil {
		return nil, err
	}
	return fixLen(dst, start), nil
}

// append writes the field with JSON value v.
func (f *field) append(dst []byte, v any, depth int) ([]byte, *Error) {
	if v == nil {
		// null: absent, except where the message's own JSON form is null
		// (the zero Time of a non-pointer field): an empty message.
		if !f.list && !f.isMap && !f.nullable && f.msg != nil && nullMessage(f.msg.special) {
			return append(protowire.AppendTag(dst, f.num, protowire.BytesType), 0), nil
		}
		return dst, nil
	}
	switch {
	case f.isMap:
		return f.appendMap(dst, v, depth)
	case f.list:
		return f.appendList(dst, v, depth)
	}
	return f.appendValue(dst, v, f.encZero, depth)
}

// nullMessage reports whether a special message reads back as JSON null when
// empty.
func nullMessage(s special) bool {
	return s == timeMsg || s == microTime || s == rawExt || s == fieldsV1 || s == stringList || s == orArray || s == orStrings
}

func (f *field) appendMap(dst []byte, v any, depth int) ([]byte, *Error) {
	var stack [8]string // most maps' keys (labels, selectors): no allocation
	var keys []string
	switch obj := v.(type) {
	case map[string]any:
		keys = sortedKeys(stack[:0], obj)
		for _, k := range keys {
			var err *Error
			if dst, err = f.appendEntry(dst, k, obj[k], depth); err != nil {
				return nil, err.under(k)
			}
		}
	case map[string]string:
		keys = sortedKeys(stack[:0], obj)
		for _, k := range keys {
			var err *Error
			if dst, err = f.appendEntry(dst, k, obj[k], depth); err != nil {
				return nil, err.under(k)
			}
		}
	default:
		return nil, mismatch("object", v)
	}
	return dst, nil
}

// sortedKeys appends m's keys to keys, sorted.
func sortedKeys[V any](keys []string, m map[string]V) []string {
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// appendEntry writes one map entry: key (field 1) and value (field 2),
// both always present, as Kubernetes' generated code writes them.
func (f *field) appendEntry(dst []byte, k string, v any, depth int) ([]byte, *Error) {
	dst = protowire.AppendTag(dst, f.num, protowire.BytesType)
	start := len(dst)
	dst = append(dst, 0)
	var err *Error
	switch f.key.kind {
	case protoreflect.StringKind:
		dst = appendString(dst, 1, k)
	case protoreflect.BoolKind:
		b, perr := strconv.ParseBool(k)
		if perr != nil {
			return nil, invalidf("expected a boolean map key, got %q", k)
		}
		dst, err = f.key.appendValue(dst, b, true, depth)
	default: // integer keys are JSON strings
		dst, err = f.key.appendValue(dst, json.Number(k), true, depth)
	}
	if err != nil {
		return nil, err
	}
	if v == nil && f.val.msg != nil && !nullMessage(f.val.msg.special) {
		v = map[string]any{}
	}
	if v == nil && f.val.msg != nil && f.val.msg.special == stringList {
		v = []any{} // gogo writes a nil ExtraValue as an empty message
	}
	if v != nil {
		if dst, err = f.val.appendValue(dst, v, true, depth); err != nil {
			return nil, err
		}
	}
	return fixLen(dst, start), nil
}

func (f *field) appendList(dst []byte, v any, depth int) ([]byte, *Error) {
	var list []any
	switch l := v.(type) {
	case []any:
		list = l
	case []string:
		if f.kind != protoreflect.StringKind && f.kind != protoreflect.BytesKind {
			return nil, invalidf("expected %s, got string", kindName(f))
		}
		for _, s := range l {
			if f.kind == protoreflect.BytesKind {
				var err *Error
				if dst, err = f.appendValue(dst, s, true, depth); err != nil {
					return nil, err
				}
				continue
			}
			dst = appendString(dst, f.num, s)
		}
		return dst, nil
	default:
		return nil, mismatch("array", v)
	}
	if f.packed {
		dst = protowire.AppendTag(dst, f.num, protowire.BytesType)
		start := len(dst)
		dst = append(dst, 0)
		for i, e := range list {
			if e == nil {
				e = zeroOf(f.kind)
			}
			var err *Error
			if dst, err = f.appendScalar(dst, e); err != nil {
				return nil, err.under("[" + strconv.Itoa(i) + "]")
			}
		}
		return fixLen(dst, start), nil
	}
	for i, e := range list {
		var err *Error
		if e == nil && f.msg != nil && !nullMessage(f.msg.special) {
			e = map[string]any{}
		}
		if e == nil && f.msg == nil {
			e = zeroOf(f.kind)
		}
		if e == nil {
			dst = append(protowire.AppendTag(dst, f.num, protowire.BytesType), 0)
			continue
		}
		if dst, err = f.appendValue(dst, e, true, depth); err != nil {
			return nil, err.under("[" + strconv.Itoa(i) + "]")
		}
	}
	return dst, nil
}

// zeroOf is the JSON zero value of a scalar kind: what encoding/json leaves
// for a null list element.
func zeroOf(k protoreflect.Kind) any {
	switch k {
	case protoreflect.StringKind, protoreflect.BytesKind:
		return ""
	case protoreflect.BoolKind:
		return false
	}
	return json.Number("0")
}

// appendValue writes one value of f with its tag; a zero scalar is written
// only if keepZero. v is not nil.
func (f *field) appendValue(dst []byte, v any, keepZero bool, depth int) ([]byte, *Error) {
	switch f.kind {
	case protoreflect.MessageKind:
		dst = protowire.AppendTag(dst, f.num, protowire.BytesType)
		start := len(dst)
		dst = append(dst, 0)
		var err *Error
		if f.msg.special.union() {
			dst, err = f.msg.built().appendUnion(dst, v, depth+1)
		} else if f.msg.special != plain {
			dst, err = appendSpecial(dst, f.msg.special, v)
		} else if obj, ok := v.(map[string]any); ok {
			dst, err = f.msg.built().appendObject(dst, obj, depth+1)
		} else {
			err = mismatch("object", v)
		}
		if err != nil {
			return nil, err
		}
		return fixLen(dst, start), nil
	case protoreflect.StringKind:
		s, ok := v.(string)
		if !ok {
			return nil, mismatch("string", v)
		}
		if s == "" && !keepZero {
			return dst, nil
		}
		return appendString(dst, f.num, s), nil
	case protoreflect.BytesKind:
		s, ok := v.(string)
		if !ok {
			return nil, mismatch("string", v)
		}
		if s == "" && !keepZero {
			return dst, nil
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, invalidf("illegal base64 data: %v", err)
		}
		return appendBytes(dst, f.num, b), nil
	}
	start := len(dst)
	dst = protowire.AppendTag(dst, f.num, f.wire)
	tagEnd := len(dst)
	dst, err := f.appendScalar(dst, v)
	if err != nil {
		return nil, err
	}
	if !keepZero && isZero(dst[tagEnd:]) {
		return dst[:start], nil
	}
	return dst, nil
}

// isZero reports whether b, one number as appendScalar encodes it, is zero:
// all its bytes are (-0.0 is not: JSON writes it as -0).
func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// appendScalar writes one number or bool of f's kind, without a tag.
func (f *field) appendScalar(dst []byte, v any) ([]byte, *Error) {
	switch f.kind {
	case protoreflect.BoolKind:
		b, ok := v.(bool)
		if !ok {
			return nil, mismatch("boolean", v)
		}
		return protowire.AppendVarint(dst, protowire.EncodeBool(b)), nil
	case protoreflect.EnumKind:
		if s, ok := v.(string); ok {
			ev := f.enum.Values().ByName(protoreflect.Name(s))
			if ev == nil {
				return nil, invalidf("unknown enum value %q of %s", s, f.enum.FullName())
			}
			return protowire.AppendVarint(dst, uint64(int64(ev.Number()))), nil
		}
		n, err := toInt(v, math.MinInt32, math.MaxInt32, "int32")
		if err != nil {
			return nil, err
		}
		return protowire.AppendVarint(dst, uint64(n)), nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		n, err := toInt(v, math.MinInt32, math.MaxInt32, "int32")
		if err != nil {
			return nil, err
		}
		switch f.kind {
		case protoreflect.Sint32Kind:
			return protowire.AppendVarint(dst, protowire.EncodeZigZag(n)&math.MaxUint32), nil
		case protoreflect.Sfixed32Kind:
			return protowire.AppendFixed32(dst, uint32(n)), nil
		}
		return protowire.AppendVarint(dst, uint64(n)), nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		n, err := toInt(v, math.MinInt64, math.MaxInt64, "int64")
		if err != nil {
			return nil, err
		}
		switch f.kind {
		case protoreflect.Sint64Kind:
			return protowire.AppendVarint(dst, protowire.EncodeZigZag(n)), nil
		case protoreflect.Sfixed64Kind:
			return protowire.AppendFixed64(dst, uint64(n)), nil
		}
		return protowire.AppendVarint(dst, uint64(n)), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		n, err := toUint(v, math.MaxUint32, "uint32")
		if err != nil {
			return nil, err
		}
		if f.kind == protoreflect.Fixed32Kind {
			return protowire.AppendFixed32(dst, uint32(n)), nil
		}
		return protowire.AppendVarint(dst, n), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		n, err := toUint(v, math.MaxUint64, "uint64")
		if err != nil {
			return nil, err
		}
		if f.kind == protoreflect.Fixed64Kind {
			return protowire.AppendFixed64(dst, n), nil
		}
		return protowire.AppendVarint(dst, n), nil
	case protoreflect.FloatKind:
		x, err := toFloat(v)
		if err != nil {
			return nil, err
		}
		return protowire.AppendFixed32(dst, math.Float32bits(float32(x))), nil
	case protoreflect.DoubleKind:
		x, err := toFloat(v)
		if err != nil {
			return nil, err
		}
		return protowire.AppendFixed64(dst, math.Float64bits(x)), nil
	}
	return nil, invalidf("expected %s, got %s", kindName(f), jsonType(v))
}

// fixLen fills in the length of a length-delimited value that starts at
// dst[start], where one byte was reserved for its length.
func fixLen(dst []byte, start int) []byte {
	n := len(dst) - start - 1
	if n < 0x80 {
		dst[start] = byte(n)
		return dst
	}
	s := protowire.SizeVarint(uint64(n))
	dst = append(dst, make([]byte, s-1)...)
	copy(dst[start+s:], dst[start+1:start+1+n])
	protowire.AppendVarint(dst[start:start], uint64(n))
	return dst
}

func toInt(v any, lo, hi int64, typ string) (int64, *Error) {
	var n int64
	switch x := v.(type) {
	case json.Number:
		i, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			return 0, invalidf("expected %s, got %s", typ, string(x))
		}
		n = i
	case int64:
		n = x
	case int:
		n = int64(x)
	case int32:
		n = int64(x)
	case uint64:
		if x > math.MaxInt64 {
			return 0, invalidf("%d out of range for %s", x, typ)
		}
		n = int64(x)
	case float64:
		if x != math.Trunc(x) || x < -(1<<63) || x >= 1<<63 {
			return 0, invalidf("expected %s, got %v", typ, x)
		}
		n = int64(x)
	default:
		return 0, mismatch(typ, v)
	}
	if n < lo || n > hi {
		return 0, invalidf("%d out of range for %s", n, typ)
	}
	return n, nil
}

func toUint(v any, hi uint64, typ string) (uint64, *Error) {
	var n uint64
	switch x := v.(type) {
	case json.Number:
		u, err := strconv.ParseUint(string(x), 10, 64)
		if err != nil {
			if _, err := strconv.ParseInt(string(x), 10, 64); err == nil {
				return 0, invalidf("%s out of range for %s", string(x), typ)
			}
			return 0, invalidf("expected %s, got %s", typ, string(x))
		}
		n = u
	case uint64:
		n = x
	case int64, int, int32:
		i, _ := toInt(x, math.MinInt64, math.MaxInt64, typ)
		if i < 0 {
			return 0, invalidf("%d out of range for %s", i, typ)
		}
		n = uint64(i)
	case float64:
		if x != math.Trunc(x) || x < 0 || x >= 1<<64 {
			return 0, invalidf("expected %s, got %v", typ, x)
		}
		n = uint64(x)
	default:
		return 0, mismatch(typ, v)
	}
	if n > hi {
		return 0, invalidf("%d out of range for %s", n, typ)
	}
	return n, nil
}

func toFloat(v any) (float64, *Error) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return 0, invalidf("expected number, got %s", string(x))
		}
		return f, nil
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case int:
		return float64(x), nil
	case int32:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	}
	return 0, mismatch("number", v)
}

func mismatch(want string, v any) *Error {
	return invalidf("expected %s, got %s", want, jsonType(v))
}

// jsonType names v's JSON type, as a client would read it.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case map[string]any, map[string]string:
		return "object"
	case []any, []string:
		return "array"
	case json.Number, float64, float32, int, int64, int32, uint64:
		return "number"
	}
	return "unsupported Go type"
}

func kindName(f *field) string {
	switch f.kind {
	case protoreflect.StringKind, protoreflect.BytesKind:
		return "string"
	case protoreflect.BoolKind:
		return "boolean"
	case protoreflect.MessageKind:
		return "object"
	}
	return f.kind.String()
}
