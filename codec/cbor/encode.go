package cbor

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ErrInvalid is the sentinel every error of this package wraps: a body that
// is not CBOR kube accepts, or a value that has no CBOR form kube would write
// (NaN, an unparseable json.Number, an unsupported Go type).
var ErrInvalid = errors.New("cbor: invalid")

// SelfDescribed is the head of tag 55799, "self-described CBOR" (RFC 8949
// section 3.4.6). kube's serializer opens every document it writes with it
// and uses it as the magic number that recognizes CBOR bodies.
const SelfDescribed = "\xd9\xd9\xf7"

// maxDepth bounds the nesting of maps and arrays, in both directions. It is
// kube's decoder limit (MaxNestedLevels, the JSON decoder's limit too).
const maxDepth = 10000

// CBOR major types (RFC 8949 section 3.1), shifted into the head byte.
const (
	majorUint   byte = 0x00
	majorNegInt byte = 0x20
	majorBytes  byte = 0x40
	majorArray  byte = 0x80
	majorMap    byte = 0xa0

	cborFalse   byte = 0xf4
	cborTrue    byte = 0xf5
	cborNull    byte = 0xf6
	cborFloat16 byte = 0xf9
	cborFloat32 byte = 0xfa
	cborFloat64 byte = 0xfb
)

// valueError reports a value that has no CBOR encoding.
type valueError struct{ msg string }

func (e *valueError) Error() string { return "cbor: invalid value: " + e.msg }

func (e *valueError) Unwrap() error { return ErrInvalid }

// Marshal encodes obj as a complete application/cbor body: [SelfDescribed]
// followed by the map, exactly the bytes kube's CBOR serializer writes when
// it encodes an *unstructured.Unstructured holding the same content. A nil
// obj encodes as an empty map, as Unstructured's content does.
func Marshal(obj map[string]any) ([]byte, error) {
	e := getEncoder()
	defer putEncoder(e)
	e.buf = append(e.buf[:0], SelfDescribed...)
	var err error
	if obj == nil {
		e.buf = append(e.buf, majorMap)
	} else {
		err = e.encodeMap(obj, 0)
	}
	if err != nil {
		return nil, err
	}
	return slices.Clone(e.buf), nil
}

// AppendValue appends the encoding of one JSON-form value, without the tag,
// to dst. The value is a map[string]any, []any, string, bool, nil, a
// json.Number or a Go integer or float; numbers are written as kube writes
// the int64 or float64 its JSON decoding would make of them (an integer
// literal that fits int64 is an int64, anything else a float64). On error it
// returns dst unchanged.
func AppendValue(dst []byte, v any) ([]byte, error) {
	e := getEncoder()
	defer putEncoder(e)
	n := len(dst)
	e.buf = dst
	err := e.encode(v, 0)
	out := e.buf
	e.buf = nil // dst belongs to the caller; never pool it
	if err != nil {
		return dst[:n], err
	}
	return out, nil
}

// encoder holds the output and a stack of map keys for sorting; pooled so
// that steady-state encoding allocates only the result.
type encoder struct {
	buf  []byte
	keys []string
}

var encoders = sync.Pool{New: func() any { return new(encoder) }}

func getEncoder() *encoder { return encoders.Get().(*encoder) }

func putEncoder(e *encoder) {
	if cap(e.buf) > 1<<20 {
		e.buf = nil
	}
	if cap(e.keys) > 1<<12 {
		e.keys = nil
	}
	clear(e.keys[:cap(e.keys)]) // drop references to the caller's strings
	e.keys = e.keys[:0]
	encoders.Put(e)
}

func (e *encoder) encode(v any, depth int) error {
	switch v := v.(type) {
	case nil:
		e.buf = append(e.buf, cborNull)
	case string:
		e.appendString(v)
	case bool:
		if v {
			e.buf = append(e.buf, cborTrue)
		} else {
			e.buf = append(e.buf, cborFalse)
		}
	case map[string]any:
		if v == nil {
			e.buf = append(e.buf, cborNull)
			return nil
		}
		return e.encodeMap(v, depth)
	case []any:
		if v == nil {
			e.buf = append(e.buf, cborNull)
			return nil
		}
		if depth >= maxDepth {
			return errTooDeep
		}
		e.buf = appendHead(e.buf, majorArray, uint64(len(v)))
		for _, x := range v {
			if err := e.encode(x, depth+1); err != nil {
				return err
			}
		}
	case json.Number:
		return e.appendNumber(v)
	case int64:
		e.appendInt(v)
	case int:
		e.appendInt(int64(v))
	case int32:
		e.appendInt(int64(v))
	case uint64:
		e.buf = appendHead(e.buf, majorUint, v)
	case uint32:
		e.buf = appendHead(e.buf, majorUint, uint64(v))
	case float64:
		return e.appendFloat(v)
	case float32:
		return e.appendFloat(float64(v))
	case []string:
		if v == nil {
			e.buf = append(e.buf, cborNull)
			return nil
		}
		e.buf = appendHead(e.buf, majorArray, uint64(len(v)))
		for _, s := range v {
			e.appendString(s)
		}
	case map[string]string:
		if v == nil {
			e.buf = append(e.buf, cborNull)
			return nil
		}
		base := len(e.keys)
		for k := range v {
			e.keys = append(e.keys, k)
		}
		keys := e.keys[base:]
		slices.SortFunc(keys, compareKeys)
		e.buf = appendHead(e.buf, majorMap, uint64(len(keys)))
		for _, k := range keys {
			e.appendString(k)
			e.appendString(v[k])
		}
		e.keys = e.keys[:base]
	default:
		return &valueError{fmt.Sprintf("unsupported type %T", v)}
	}
	return nil
}

var errTooDeep = &valueError{"nesting deeper than " + strconv.Itoa(maxDepth) + " levels"}

// encodeMap writes m with its keys in RFC 8949 core deterministic order,
// kube's SortBytewiseLexical: keys are byte strings, so the encoded key's
// head orders them by length first and the bytes order equal lengths.
func (e *encoder) encodeMap(m map[string]any, depth int) error {
	if depth >= maxDepth {
		return errTooDeep
	}
	base := len(e.keys)
	for k := range m {
		e.keys = append(e.keys, k)
	}
	// keys stays valid when nested maps grow e.keys: they append past it,
	// and a reallocation leaves this backing array as it is.
	keys := e.keys[base:]
	slices.SortFunc(keys, compareKeys)
	e.buf = appendHead(e.buf, majorMap, uint64(len(keys)))
	for _, k := range keys {
		e.appendString(k)
		if err := e.encode(m[k], depth+1); err != nil {
			return err
		}
	}
	clear(keys)
	e.keys = e.keys[:base]
	return nil
}

// compareKeys is the order of keys encoded as CBOR byte strings.
func compareKeys(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// appendString writes s as a byte string, as kube does for every Go string
// (StringToByteString): it never validates UTF-8 on the way out.
func (e *encoder) appendString(s string) {
	e.buf = appendHead(e.buf, majorBytes, uint64(len(s)))
	e.buf = append(e.buf, s...)
}

func (e *encoder) appendInt(i int64) {
	if i < 0 {
		e.buf = appendHead(e.buf, majorNegInt, uint64(-1-i))
		return
	}
	e.buf = appendHead(e.buf, majorUint, uint64(i))
}

// appendNumber converts n as kube's unstructured JSON decoding does
// (k8s.io/apimachinery/pkg/util/json convertNumber): int64 when it parses
// as one, else float64, else an error.
func (e *encoder) appendNumber(n json.Number) error {
	// Only [+-]digits can parse as an int64; skipping ParseInt for the rest
	// spares it building an error for every float.
	if isIntegerLiteral(string(n)) {
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			e.appendInt(i)
			return nil
		}
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return &valueError{fmt.Sprintf("number %q: %v", string(n), errors.Unwrap(err))}
	}
	return e.appendFloat(f)
}

// appendFloat writes f in the narrowest IEEE 754 width that holds it
// exactly (kube's ShortestFloat16): float16, else float32, else float64.
// NaN and infinities are refused, as kube's encoder and JSON refuse them.
func (e *encoder) appendFloat(f float64) error {
	if math.IsNaN(f) {
		return &valueError{"floating-point NaN"}
	}
	if math.IsInf(f, 0) {
		return &valueError{"floating-point infinity"}
	}
	f32 := float32(f)
	if float64(f32) != f {
		bits := math.Float64bits(f)
		e.buf = append(e.buf, cborFloat64,
			byte(bits>>56), byte(bits>>48), byte(bits>>40), byte(bits>>32),
			byte(bits>>24), byte(bits>>16), byte(bits>>8), byte(bits))
		return nil
	}
	bits := math.Float32bits(f32)
	if h, ok := float16Exact(bits); ok {
		e.buf = append(e.buf, cborFloat16, byte(h>>8), byte(h))
		return nil
	}
	e.buf = append(e.buf, cborFloat32, byte(bits>>24), byte(bits>>16), byte(bits>>8), byte(bits))
	return nil
}

// float16Exact returns the binary16 encoding of the finite float32 with bits
// u when binary16 holds its value exactly, subnormals included (what
// fxamacker's ShortestFloat16 decides through x448/float16).
func float16Exact(u uint32) (uint16, bool) {
	sign := uint16(u>>16) & 0x8000
	exp := int32(u>>23&0xff) - 127
	mant := u & 0x7fffff
	switch {
	case u&0x7fffffff == 0: // ±0
		return sign, true
	case exp == -127: // float32 subnormal: far below binary16's range
		return 0, false
	case exp > 15 || exp < -24:
		return 0, false
	case exp >= -14: // binary16 normal: 10 mantissa bits
		if mant&0x1fff != 0 {
			return 0, false
		}
		return sign | uint16(exp+15)<<10 | uint16(mant>>13), true
	default: // binary16 subnormal: m × 2^-24 with m < 1024
		m := 1<<23 | mant
		shift := uint32(-(exp + 1)) // 14..23
		if m&(1<<shift-1) != 0 {
			return 0, false
		}
		return sign | uint16(m>>shift), true
	}
}

// appendHead writes a CBOR head in its shortest form.
func appendHead(b []byte, major byte, n uint64) []byte {
	switch {
	case n < 24:
		return append(b, major|byte(n))
	case n <= math.MaxUint8:
		return append(b, major|24, byte(n))
	case n <= math.MaxUint16:
		return append(b, major|25, byte(n>>8), byte(n))
	case n <= math.MaxUint32:
		return append(b, major|26, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	default:
		return append(b, major|27, byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32),
			byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}

func isIntegerLiteral(s string) bool {
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
