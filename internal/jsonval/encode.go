package jsonval

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Marshal returns the JSON encoding of v, byte for byte what
// encoding/json.Marshal returns (keys sorted, <, > and & escaped, invalid
// UTF-8 as \ufffd, floats in its format), and the same errors. It is
// written for the unstructured form — map[string]any, []any, string,
// bool, nil, json.Number and the integer and float types — which it
// encodes without reflection; any other value is handed to
// encoding/json, so the result is the same whatever v holds.
func Marshal(v any) ([]byte, error) {
	e := encoders.Get().(*encoder)
	defer e.put()
	if err := e.value(v, 0); err != nil {
		if errors.Is(err, errTooDeep) { // maybe a cycle: encoding/json finds it, or encodes the depth
			return json.Marshal(v)
		}
		return nil, err
	}
	return bytes.Clone(e.buf), nil // one allocation of the result's size
}

// Append appends Marshal(v) to dst: the same bytes and errors, without
// the result's own allocation. On an error dst is returned unchanged.
func Append(dst []byte, v any) ([]byte, error) {
	e := encoders.Get().(*encoder)
	pooled := e.buf
	e.buf = dst
	err := e.value(v, 0)
	out := e.buf
	e.buf = pooled
	e.put()
	if errors.Is(err, errTooDeep) {
		b, err := json.Marshal(v)
		if err != nil {
			return dst, err
		}
		return append(dst, b...), nil
	}
	if err != nil {
		return dst, err
	}
	return out, nil
}

// encoders keeps encoders, whose buffers are reused by later calls.
var encoders = sync.Pool{New: func() any { return &encoder{buf: make([]byte, 0, 4096)} }}

// maxPooled is the largest buffer an encoder keeps for the next call.
const maxPooled = 64 << 10

func (e *encoder) put() {
	if cap(e.buf) > maxPooled {
		return
	}
	e.buf = e.buf[:0]
	clear(e.members[:cap(e.members)])
	e.members = e.members[:0]
	encoders.Put(e)
}

// maxDepth bounds the nesting Marshal encodes itself; deeper values go to
// encoding/json, which detects cycles.
const maxDepth = 1000

var errTooDeep = errors.New("jsonval: nested too deep")

type encoder struct {
	buf     []byte
	members []member // reused for sorting each map's members
}

type member struct {
	key   string
	value any
}

func (e *encoder) value(v any, depth int) error {
	switch v := v.(type) {
	case nil:
		e.buf = append(e.buf, "null"...)
	case string:
		e.buf = appendString(e.buf, v)
	case map[string]any:
		return e.object(v, depth)
	case []any:
		return e.array(v, depth)
	case bool:
		e.buf = strconv.AppendBool(e.buf, v)
	case int64:
		e.buf = strconv.AppendInt(e.buf, v, 10)
	case int:
		e.buf = strconv.AppendInt(e.buf, int64(v), 10)
	case int32:
		e.buf = strconv.AppendInt(e.buf, int64(v), 10)
	case int16:
		e.buf = strconv.AppendInt(e.buf, int64(v), 10)
	case int8:
		e.buf = strconv.AppendInt(e.buf, int64(v), 10)
	case uint64:
		e.buf = strconv.AppendUint(e.buf, v, 10)
	case uint:
		e.buf = strconv.AppendUint(e.buf, uint64(v), 10)
	case uint32:
		e.buf = strconv.AppendUint(e.buf, uint64(v), 10)
	case uint16:
		e.buf = strconv.AppendUint(e.buf, uint64(v), 10)
	case uint8:
		e.buf = strconv.AppendUint(e.buf, uint64(v), 10)
	case float64:
		return e.float(v, 64)
	case float32:
		return e.float(float64(v), 32)
	case json.Number:
		if !validNumber(string(v)) { // "" is "0"; the rest are errors
			return e.other(v)
		}
		e.buf = append(e.buf, v...)
	default:
		return e.other(v)
	}
	return nil
}

// other encodes v with encoding/json: nested, a value encodes as it does
// alone.
func (e *encoder) other(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	e.buf = append(e.buf, b...)
	return nil
}

func (e *encoder) object(m map[string]any, depth int) error {
	if m == nil {
		e.buf = append(e.buf, "null"...)
		return nil
	}
	if depth >= maxDepth {
		return errTooDeep
	}
	switch len(m) {
	case 0: // a fieldsV1 trie's leaves, empty labels: nothing to sort
		e.buf = append(e.buf, "{}"...)
		return nil
	case 1: // most of a fieldsV1 trie's nodes, a selector's matchLabels
		for k, v := range m {
			e.buf = appendString(append(e.buf, '{'), k)
			e.buf = append(e.buf, ':')
			if err := e.value(v, depth+1); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, '}')
		return nil
	}
	// The members go on a shared stack: a nested map's above ours.
	base := len(e.members)
	for k, v := range m {
		e.members = append(e.members, member{k, v})
	}
	sortMembers(e.members[base:])
	e.buf = append(e.buf, '{')
	for i := base; i < base+len(m); i++ {
		mb := e.members[i] // e.members may have grown (and moved) under a nested map
		if i > base {
			e.buf = append(e.buf, ',')
		}
		e.buf = appendString(e.buf, mb.key)
		e.buf = append(e.buf, ':')
		if err := e.value(mb.value, depth+1); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}')
	e.members = e.members[:base] // cleared by put, not here: clearing pointers costs write barriers
	return nil
}

// sortMembers sorts ms by key (byte order, as encoding/json sorts a map's
// keys; keys are distinct): by insertion for the few members most maps
// have, without the generic sort's calls through a comparison function.
func sortMembers(ms []member) {
	if len(ms) > 12 {
		slices.SortFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
		return
	}
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && ms[j].key < ms[j-1].key; j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}

func (e *encoder) array(l []any, depth int) error {
	if l == nil {
		e.buf = append(e.buf, "null"...)
		return nil
	}
	if depth >= maxDepth {
		return errTooDeep
	}
	e.buf = append(e.buf, '[')
	for i, v := range l {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		if err := e.value(v, depth+1); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, ']')
	return nil
}

// float writes f as encoding/json does: like %g with ES6's exponent
// cutoffs, exponents unpadded. NaN and ±Inf are its errors.
func (e *encoder) float(f float64, bits int) error {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		if bits == 32 {
			return e.other(float32(f))
		}
		return e.other(f)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	e.buf = strconv.AppendFloat(e.buf, f, format, -1, bits)
	if format == 'e' { // e-09 → e-9
		if n := len(e.buf); n >= 4 && e.buf[n-4] == 'e' && e.buf[n-3] == '-' && e.buf[n-2] == '0' {
			e.buf[n-2] = e.buf[n-1]
			e.buf = e.buf[:n-1]
		}
	}
	return nil
}

const hex = "0123456789abcdef"

// appendString writes s as a JSON string the way encoding/json does with
// HTML escaping on (its default).
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) && safe8(s[i:i+8]) {
			i += 8
			continue
		}
		if b := s[i]; b < utf8.RuneSelf {
			if htmlSafe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default: // other control bytes, and < > &
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// safe8 reports whether the 8 bytes of s are all htmlSafe, testing them
// at once: none is below 0x20 or at or above 0x80, none is one of the five
// escaped characters. (x - 0x01…01*n) & ^x & 0x80…80 is not 0 exactly
// when some byte of x is below n, for n ≤ 0x80.
func safe8(s string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	below := func(x uint64, n uint64) uint64 { return (x - ones*n) & ^x & highs }
	bad := x&highs | below(x, 0x20) |
		below(x^(ones*'"'), 1) | below(x^(ones*'\\'), 1) |
		below(x^(ones*'<'), 1) | below(x^(ones*'>'), 1) | below(x^(ones*'&'), 1)
	return bad == 0
}

// htmlSafe holds the ASCII bytes a JSON string carries as they are with
// HTML escaping on: not a control byte, '"', '\\', '<', '>' or '&'.
var htmlSafe = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = !strings.ContainsRune("\"\\<>&", rune(b))
	}
	return t
}()

// validNumber reports whether s is a JSON number literal (RFC 8259).
func validNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i == len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i == len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
	}
	return i == len(s)
}
