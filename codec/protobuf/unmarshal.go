package protobuf

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Unmarshal decodes b, a message md describes (no envelope), into its JSON
// form. Scalars with implicit presence are written when non-zero, scalars
// with explicit presence (proto3 optional) whenever present; present
// messages become objects ("spec": {}), special messages their JSON values
// (see the package doc). Repeated scalars are read packed or not; a message
// or map field seen twice is merged, a scalar's last value wins; unknown
// fields are skipped. Numbers are json.Number.
//
// Malformed bytes, a known field with the wrong wire type, or a value with no
// JSON form (NaN, a time past year 9999, RawExtension bytes that are not
// JSON) are an [*Error] naming the field's path; it wraps [ErrInvalid].
//
// The strings of the result share one copy of b (b itself may be reused).
func Unmarshal(md protoreflect.MessageDescriptor, b []byte) (map[string]any, error) {
	obj := map[string]any{}
	d := &decoder{src: string(b), base: cap(b)}
	if err := table(md).built().decode(d, b, obj, 0); err != nil {
		return nil, err
	}
	return obj, nil
}

// decoder holds the input of one Unmarshal as a string, so that every string
// of the result is a substring of it rather than an allocation of its own.
type decoder struct {
	src  string
	base int // cap of the input slice
}

// str returns v, a sub-slice of the input, as a substring of d.src. Every
// slice the decoder reads is re-sliced from the input with two-index slice
// expressions (consumeBytes too), so its capacity runs to the input's end
// and base - cap(v) is its offset.
func (d *decoder) str(v []byte) string {
	if len(v) == 0 {
		return ""
	}
	off := d.base - cap(v)
	return d.src[off : off+len(v)]
}

// consumeBytes is protowire.ConsumeBytes with the capacity of v guaranteed
// to run to the end of b (see decoder.str).
func consumeBytes(b []byte) ([]byte, int) {
	m, n := protowire.ConsumeVarint(b)
	if n < 0 {
		return nil, n
	}
	if m > uint64(len(b)-n) {
		return nil, -1 // truncated, as protowire reports it
	}
	return b[n : n+int(m)], n + int(m)
}

func (m *message) decode(d *decoder, b []byte, obj map[string]any, depth int) *Error {
	if depth > maxDepth {
		return invalidf("nested too deeply")
	}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return wireError(n)
		}
		b = b[n:]
		f := m.field(num)
		if f == nil {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return wireError(n)
			}
			b = b[n:]
			continue
		}
		var err *Error
		if b, err = f.decodeInto(d, obj, typ, b, depth); err != nil {
			if f.inline { // its fields are the parent's
				return err
			}
			return err.under(f.name)
		}
	}
	return nil
}

// decodeInto reads one occurrence of f from b into obj and returns the rest
// of b.
func (f *field) decodeInto(d *decoder, obj map[string]any, typ protowire.Type, b []byte, depth int) ([]byte, *Error) {
	switch {
	case f.isMap:
		if typ != protowire.BytesType {
			return nil, f.wrongWire(typ)
		}
		entry, n := consumeBytes(b)
		if n < 0 {
			return nil, wireError(n)
		}
		k, v, err := f.decodeEntry(d, entry, depth)
		if err != nil {
			return nil, err
		}
		if v == nil && f.val.msg != nil && f.val.msg.special == stringList {
			// gogo reads a map's ExtraValue into a new ExtraValue{}:
			// empty (or absent), it is [], not null.
			v = []any{}
		}
		m, _ := obj[f.name].(map[string]any)
		if m == nil {
			m = map[string]any{}
			obj[f.name] = m
		}
		m[k] = v
		return b[n:], nil
	case f.list:
		l, _ := obj[f.name].([]any)
		if typ == protowire.BytesType && f.wire != protowire.BytesType {
			packed, n := consumeBytes(b)
			if n < 0 {
				return nil, wireError(n)
			}
			for len(packed) > 0 {
				v, _, m, err := f.decodeValue(d, f.wire, packed, depth)
				if err != nil {
					return nil, err.under("[" + strconv.Itoa(len(l)) + "]")
				}
				l = append(l, v)
				packed = packed[m:]
			}
			if l != nil { // an empty packed run adds nothing
				obj[f.name] = l
			}
			return b[n:], nil
		}
		v, _, n, err := f.decodeValue(d, typ, b, depth)
		if err != nil {
			return nil, err.under("[" + strconv.Itoa(len(l)) + "]")
		}
		obj[f.name] = append(l, v)
		return b[n:], nil
	case f.inline:
		if typ != protowire.BytesType {
			return nil, f.wrongWire(typ)
		}
		body, n := consumeBytes(b)
		if n < 0 {
			return nil, wireError(n)
		}
		return b[n:], f.msg.built().decode(d, body, obj, depth+1)
	case f.msg != nil && f.msg.special == plain:
		if typ != protowire.BytesType {
			return nil, f.wrongWire(typ)
		}
		body, n := consumeBytes(b)
		if n < 0 {
			return nil, wireError(n)
		}
		child, _ := obj[f.name].(map[string]any)
		if f.inline {
			child = obj
		}
		if child == nil {
			child = map[string]any{}
			obj[f.name] = child
		}
		return b[n:], f.msg.built().decode(d, body, child, depth+1)
	}
	v, zero, n, err := f.decodeValue(d, typ, b, depth)
	if err != nil {
		return nil, err
	}
	if (f.msg != nil && v == nil && f.nullable) || (zero && !f.decZero) {
		delete(obj, f.name)
	} else {
		obj[f.name] = v
	}
	return b[n:], nil
}

// decodeEntry reads a map entry; a missing key or value is its zero value.
func (f *field) decodeEntry(d *decoder, b []byte, depth int) (string, any, *Error) {
	var key, val any
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", nil, wireError(n)
		}
		b = b[n:]
		var err *Error
		switch num {
		case 1:
			key, _, n, err = f.key.decodeValue(d, typ, b, depth)
		case 2:
			val, _, n, err = f.val.decodeValue(d, typ, b, depth)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if err != nil {
			return "", nil, err
		}
		if n < 0 {
			return "", nil, wireError(n)
		}
		b = b[n:]
	}
	if key == nil {
		key, _, _, _ = f.key.decodeValue(d, f.key.wire, zeroWire(f.key.wire), depth)
	}
	if val == nil {
		var err *Error
		if val, _, _, err = f.val.decodeValue(d, f.val.wire, zeroWire(f.val.wire), depth); err != nil {
			return "", nil, err
		}
	}
	var k string
	switch x := key.(type) {
	case string:
		k = x
	case json.Number:
		k = string(x)
	case bool:
		k = strconv.FormatBool(x)
	}
	return k, val, nil
}

// zeroWire is the encoding of a zero value of wire type w.
func zeroWire(w protowire.Type) []byte {
	switch w {
	case protowire.Fixed32Type:
		return make([]byte, 4)
	case protowire.Fixed64Type:
		return make([]byte, 8)
	}
	return []byte{0}
}

func (f *field) wrongWire(typ protowire.Type) *Error {
	return invalidf("wrong wire type %d for a field of type %s", typ, f.kind)
}

// decodeValue reads one value of f (of wire type typ) from b: its JSON value,
// whether it is a zero scalar, and the bytes read.
func (f *field) decodeValue(d *decoder, typ protowire.Type, b []byte, depth int) (any, bool, int, *Error) {
	if typ != f.wire {
		return nil, false, 0, f.wrongWire(typ)
	}
	switch typ {
	case protowire.BytesType:
		v, n := consumeBytes(b)
		if n < 0 {
			return nil, false, 0, wireError(n)
		}
		switch f.kind {
		case protoreflect.StringKind:
			return d.str(v), len(v) == 0, n, nil
		case protoreflect.BytesKind:
			return base64.StdEncoding.EncodeToString(v), len(v) == 0, n, nil
		}
		if f.msg.special.union() {
			obj := map[string]any{}
			if err := f.msg.built().decode(d, v, obj, depth+1); err != nil {
				return nil, false, n, err
			}
			return f.msg.pickUnion(obj), false, n, nil
		}
		if f.msg.special != plain {
			x, err := decodeSpecial(d, f.msg.special, v)
			return x, false, n, err
		}
		obj := map[string]any{}
		return obj, false, n, f.msg.built().decode(d, v, obj, depth+1)
	case protowire.VarintType:
		v, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return nil, false, 0, wireError(n)
		}
		zero := v == 0
		switch f.kind {
		case protoreflect.BoolKind:
			return v != 0, zero, n, nil
		case protoreflect.Int32Kind:
			return anyNumber(int64(int32(v))), zero, n, nil
		case protoreflect.Sint32Kind:
			x := int64(int32(protowire.DecodeZigZag(v & math.MaxUint32)))
			return anyNumber(x), x == 0, n, nil
		case protoreflect.Sint64Kind:
			return anyNumber(protowire.DecodeZigZag(v)), zero, n, nil
		case protoreflect.Uint32Kind:
			return anyUnumber(uint64(uint32(v))), uint32(v) == 0, n, nil
		case protoreflect.Uint64Kind:
			return anyUnumber(v), zero, n, nil
		case protoreflect.EnumKind:
			x := int32(v)
			if ev := f.enum.Values().ByNumber(protoreflect.EnumNumber(x)); ev != nil {
				return string(ev.Name()), x == 0, n, nil
			}
			return anyNumber(int64(x)), x == 0, n, nil
		}
		return anyNumber(int64(v)), zero, n, nil
	case protowire.Fixed32Type:
		v, n := protowire.ConsumeFixed32(b)
		if n < 0 {
			return nil, false, 0, wireError(n)
		}
		switch f.kind {
		case protoreflect.Sfixed32Kind:
			return anyNumber(int64(int32(v))), v == 0, n, nil
		case protoreflect.FloatKind:
			x, err := float(float64(math.Float32frombits(v)), 32)
			return x, v == 0, n, err
		}
		return anyUnumber(uint64(v)), v == 0, n, nil
	case protowire.Fixed64Type:
		v, n := protowire.ConsumeFixed64(b)
		if n < 0 {
			return nil, false, 0, wireError(n)
		}
		switch f.kind {
		case protoreflect.Sfixed64Kind:
			return anyNumber(int64(v)), v == 0, n, nil
		case protoreflect.DoubleKind:
			x, err := float(math.Float64frombits(v), 64)
			return x, v == 0, n, err
		}
		return anyUnumber(v), v == 0, n, nil
	}
	return nil, false, 0, f.wrongWire(typ)
}

func number(n int64) json.Number   { return json.Number(strconv.FormatInt(n, 10)) }
func unumber(n uint64) json.Number { return json.Number(strconv.FormatUint(n, 10)) }

// anyNumber and anyUnumber are number and unumber as the values of a
// decoded object: the small ones (most counts, ports and the zeros
// Kubernetes' generated code always writes) taken from smallNumbers, which
// spares boxing each into an interface.
func anyNumber(n int64) any {
	if 0 <= n && n < int64(len(smallNumbers)) {
		return smallNumbers[n]
	}
	return number(n)
}

func anyUnumber(n uint64) any {
	if n < uint64(len(smallNumbers)) {
		return smallNumbers[n]
	}
	return unumber(n)
}

// smallNumbers are json.Number 0 to 255, boxed once.
var smallNumbers = func() (t [256]any) {
	for i := range t {
		t[i] = number(int64(i))
	}
	return t
}()

// float formats f as encoding/json does for a float of the given bits.
func float(f float64, bits int) (json.Number, *Error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", invalidf("%v has no JSON form", f)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b := strconv.AppendFloat(nil, f, format, -1, bits)
	if format == 'e' {
		// clean up e-09 to e-9, as encoding/json does
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return json.Number(b), nil
}
