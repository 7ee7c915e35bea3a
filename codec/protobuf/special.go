package protobuf

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/kapi-dev/kapi/internal/jsonval"
)

// rfc3339Micro is MicroTime's JSON layout (apimachinery's RFC3339Micro).
const rfc3339Micro = "2006-01-02T15:04:05.000000Z07:00"

// appendSpecial writes the body of a special message from its JSON value v
// (not nil), as apimachinery's hand-written marshalers do.
func appendSpecial(dst []byte, s special, v any) ([]byte, *Error) {
	switch s {
	case timeMsg, microTime:
		str, ok := v.(string)
		if !ok {
			return nil, mismatch("RFC 3339 time string", v)
		}
		layout := time.RFC3339
		if s == microTime {
			layout = time.RFC3339Nano
		}
		t, err := time.Parse(layout, str)
		if err != nil {
			return nil, invalidf("invalid time %q: %v", str, err)
		}
		// Time keeps seconds only: its JSON form does, and apimachinery
		// drops nanos on both sides.
		dst = protowire.AppendTag(dst, 1, protowire.VarintType)
		dst = protowire.AppendVarint(dst, uint64(t.Unix()))
		if ns := t.Nanosecond() / 1000 * 1000; s == microTime && ns != 0 {
			dst = protowire.AppendTag(dst, 2, protowire.VarintType)
			dst = protowire.AppendVarint(dst, uint64(ns))
		}
		return dst, nil
	case duration:
		str, ok := v.(string)
		if !ok {
			return nil, mismatch("duration string", v)
		}
		d, err := time.ParseDuration(str)
		if err != nil {
			return nil, invalidf("invalid duration %q: %v", str, err)
		}
		dst = protowire.AppendTag(dst, 1, protowire.VarintType)
		return protowire.AppendVarint(dst, uint64(d)), nil
	case quantity:
		var str string
		switch x := v.(type) {
		case string:
			str = x
		case json.Number:
			str = string(x)
		case int64, int, int32, uint64, float64:
			b, _ := json.Marshal(x)
			str = string(b)
		default:
			return nil, mismatch("quantity string", v)
		}
		return appendString(dst, 1, str), nil
	case intOrString:
		if str, ok := v.(string); ok {
			dst = protowire.AppendTag(dst, 1, protowire.VarintType)
			dst = protowire.AppendVarint(dst, 1)
			if str != "" {
				dst = appendString(dst, 3, str)
			}
			return dst, nil
		}
		n, err := toInt(v, math.MinInt32, math.MaxInt32, "int32")
		if err != nil {
			if _, num := v.(bool); num || jsonType(v) != "number" {
				return nil, mismatch("integer or string", v)
			}
			return nil, err
		}
		if n != 0 {
			dst = protowire.AppendTag(dst, 2, protowire.VarintType)
			dst = protowire.AppendVarint(dst, uint64(n))
		}
		return dst, nil
	case rawExt, fieldsV1:
		// The JSON text straight into dst (jsonval writes encoding/json's
		// bytes), its length filled in after.
		dst = protowire.AppendTag(dst, 1, protowire.BytesType)
		start := len(dst)
		out, err := jsonval.Append(append(dst, 0), v)
		if err != nil {
			return nil, invalidf("cannot encode as JSON: %v", err)
		}
		return fixLen(out, start), nil
	case stringList:
		switch l := v.(type) {
		case []string:
			for _, e := range l {
				dst = appendString(dst, 1, e)
			}
			return dst, nil
		case []any:
			for i, e := range l {
				if e == nil {
					e = "" // encoding/json reads null into a string as ""
				}
				str, ok := e.(string)
				if !ok {
					return nil, mismatch("string", e).under("[" + strconv.Itoa(i) + "]")
				}
				dst = appendString(dst, 1, str)
			}
			return dst, nil
		}
		return nil, mismatch("array of strings", v)
	}
	panic("protobuf: not a special message")
}

// decodeStringList reads a stringList message: every field 1 in order; an
// empty one is null, as Go's nil slice.
func decodeStringList(d *decoder, b []byte) (any, *Error) {
	var out []any
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, wireError(n)
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			var s []byte
			s, n = consumeBytes(b)
			if n >= 0 {
				out = append(out, d.str(s))
			}
		} else if num == 1 {
			return nil, invalidf("wrong wire type %d for a field of type string", typ)
		} else {
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return nil, wireError(n)
		}
		b = b[n:]
	}
	if out == nil {
		return nil, nil
	}
	return out, nil
}

// decodeSpecial reads the body b of a special message into its JSON value.
func decodeSpecial(d *decoder, s special, b []byte) (any, *Error) {
	if s == stringList {
		return decodeStringList(d, b)
	}
	var ints [4]int64 // the varint fields 1..3, by number
	var strs [4][]byte
	for rest := b; len(rest) > 0; {
		num, typ, n := protowire.ConsumeTag(rest)
		if n < 0 {
			return nil, wireError(n)
		}
		rest = rest[n:]
		switch {
		case num < 1 || num > 3:
			n = protowire.ConsumeFieldValue(num, typ, rest)
		case typ == protowire.VarintType:
			var v uint64
			v, n = protowire.ConsumeVarint(rest)
			ints[num] = int64(v)
		case typ == protowire.BytesType:
			strs[num], n = consumeBytes(rest)
		default:
			n = protowire.ConsumeFieldValue(num, typ, rest)
		}
		if n < 0 {
			return nil, wireError(n)
		}
		rest = rest[n:]
	}
	switch s {
	case timeMsg, microTime:
		if len(b) == 0 {
			return nil, nil // the zero time
		}
		var t time.Time
		if s == timeMsg {
			t = time.Unix(ints[1], 0).UTC()
		} else {
			ns := time.Duration(int32(ints[2])).Truncate(time.Microsecond)
			t = time.Unix(ints[1], int64(ns)).UTC()
		}
		if y := t.Year(); y < 0 || y > 9999 {
			return nil, invalidf("time %d out of range", ints[1])
		}
		if s == timeMsg {
			return t.Format(time.RFC3339), nil
		}
		return t.Format(rfc3339Micro), nil
	case duration:
		return time.Duration(ints[1]).String(), nil
	case quantity:
		if len(strs[1]) == 0 {
			return "0", nil
		}
		return d.str(strs[1]), nil
	case intOrString:
		if ints[1] == 1 {
			return d.str(strs[3]), nil
		}
		return json.Number(strconv.FormatInt(int64(int32(ints[2])), 10)), nil
	case rawExt, fieldsV1:
		raw := strs[1]
		if len(raw) == 0 {
			return nil, nil
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return nil, invalidf("raw is not JSON: %v", err)
		}
		if len(bytes.Trim(raw[d.InputOffset():], " \t\r\n")) != 0 {
			return nil, invalidf("raw is not JSON: data after the value")
		}
		return v, nil
	}
	panic("protobuf: not a special message")
}

// appendUnion writes the body of a union message (m.special.union()) from
// its JSON value v (not nil), as apiextensions' hand-written JSON methods
// read it:
//
//	JSONSchemaPropsOrArray        {"type":"string"} → schema (1);  [{…},{…}] → jSONSchemas (2)
//	JSONSchemaPropsOrBool         false → allows (1) false;  {"type":"string"} → allows true, schema (2)
//	JSONSchemaPropsOrStringArray  {"type":"string"} → schema (1);  ["a","b"] → property (2)
func (m *message) appendUnion(dst []byte, v any, depth int) ([]byte, *Error) {
	if depth > maxDepth {
		return nil, invalidf("nested too deeply")
	}
	obj, isObj := v.(map[string]any)
	switch m.special {
	case orBool:
		b, isBool := v.(bool)
		if !isBool && !isObj {
			return nil, mismatch("boolean or object", v)
		}
		dst, err := m.field(1).appendValue(dst, b || isObj, true, depth)
		if err != nil || !isObj {
			return dst, err
		}
		return m.field(2).append(dst, obj, depth)
	default: // orArray, orStrings
		if isObj {
			return m.field(1).append(dst, obj, depth)
		}
		switch v.(type) {
		case []any, []string:
			return m.field(2).append(dst, v, depth)
		}
		return nil, mismatch("object or array", v)
	}
}

// pickUnion is the JSON value of a decoded union message (obj, in its
// fields' names): the array or schema it holds, or null; for
// JSONSchemaPropsOrBool the schema, else the bool.
func (m *message) pickUnion(obj map[string]any) any {
	one, two := obj[m.field(1).name], obj[m.field(2).name]
	if m.special == orBool {
		if two != nil {
			return two
		}
		b, _ := one.(bool)
		return b
	}
	if two != nil {
		return two
	}
	return one
}
