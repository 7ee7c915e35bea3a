package jsontree

import (
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
)

// errSlow is the fast decoder's answer to input it leaves to jsontext:
// a string with an escape or invalid UTF-8, deep nesting, or any syntax
// error. Decode then decodes the whole input again on jsontext, whose
// result (a tree, or an error) is the one returned.
var errSlow = errors.New("jsontree: not for the fast decoder")

// fastDepth is the nesting the fast decoder goes to; deeper input is
// jsontext's (which refuses beyond 10000, as encoding/json does).
const fastDepth = 1000

// fast decodes b by scanning its bytes: the common case of JSON whose
// strings have no escapes and are valid UTF-8. On that input it yields
// what the jsontext decoder (value) does; on any other it returns
// errSlow, or ErrNumber for a number Exact refuses.
type fast struct {
	b     []byte
	i     int
	depth int
	t     *decoder // options, path and duplicates
}

// ws skips whitespace and returns the next byte, or 0 at the end.
func (f *fast) ws() byte {
	for f.i < len(f.b) {
		switch c := f.b[f.i]; c {
		case ' ', '\t', '\n', '\r':
			f.i++
		default:
			return c
		}
	}
	return 0
}

func (f *fast) value() (any, error) {
	switch c := f.ws(); c {
	case '{':
		return f.object()
	case '[':
		return f.array()
	case '"':
		s, err := f.str()
		if err != nil {
			return nil, err
		}
		return string(s), nil
	case 't':
		return true, f.literal("true")
	case 'f':
		return false, f.literal("false")
	case 'n':
		return nil, f.literal("null")
	default:
		if c == '-' || c >= '0' && c <= '9' {
			return f.number()
		}
		return nil, errSlow
	}
}

func (f *fast) literal(s string) error {
	if len(f.b)-f.i < len(s) || string(f.b[f.i:f.i+len(s)]) != s {
		return errSlow
	}
	f.i += len(s)
	return nil
}

// str reads a string at f.i (its opening quote) and returns it unquoted:
// its bytes in b if it has no escape, else in t.scratch (see escaped).
// A string with control characters or invalid UTF-8 is left to
// jsontext.
func (f *fast) str() ([]byte, error) {
	start := f.i + 1
	ascii := true
	for j := start; j < len(f.b); j++ {
		switch c := f.b[j]; {
		case c == '"':
			s := f.b[start:j]
			if !ascii && !utf8.Valid(s) {
				return nil, errSlow
			}
			f.i = j + 1
			return s, nil
		case c == '\\':
			return f.escaped(start)
		case c < 0x20:
			return nil, errSlow
		case c >= 0x80:
			ascii = false
		}
	}
	return nil, errSlow
}

// escaped reads the rest of a string that starts at b[start] (after its
// opening quote) and has an escape. It returns the string unquoted in
// t.scratch, valid until the next call; a string with a \u escape of a
// UTF-16 surrogate, or with invalid UTF-8, is left to jsontext.
func (f *fast) escaped(start int) ([]byte, error) {
	b := f.b
	out := f.t.scratch[:0]
	for j := start; j < len(b); {
		c := b[j]
		switch {
		case c == '"':
			if !utf8.Valid(b[start:j]) { // escapes are ASCII: the rest is as written
				return nil, errSlow
			}
			f.i = j + 1
			f.t.scratch = out
			return out, nil
		case c < 0x20:
			return nil, errSlow
		case c != '\\':
			out = append(out, c)
			j++
			continue
		}
		if j+1 >= len(b) {
			return nil, errSlow
		}
		switch e := b[j+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if j+6 > len(b) {
				return nil, errSlow
			}
			r, ok := hex4(b[j+2 : j+6])
			if !ok || r >= 0xd800 && r <= 0xdfff {
				return nil, errSlow
			}
			out = utf8.AppendRune(out, r)
			j += 6
			continue
		default:
			return nil, errSlow
		}
		j += 2
	}
	return nil, errSlow
}

func hex4(h []byte) (rune, bool) {
	var r rune
	for _, c := range h {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// number reads a number of JSON's grammar and holds it as value does.
func (f *fast) number() (any, error) {
	b, start := f.b, f.i
	j := start
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && b[j] >= '1' && b[j] <= '9':
		for j++; j < len(b) && b[j] >= '0' && b[j] <= '9'; j++ {
		}
	default:
		return nil, errSlow
	}
	if j < len(b) && b[j] == '.' {
		j++
		d := j
		for ; j < len(b) && b[j] >= '0' && b[j] <= '9'; j++ {
		}
		if j == d {
			return nil, errSlow
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		d := j
		for ; j < len(b) && b[j] >= '0' && b[j] <= '9'; j++ {
		}
		if j == d {
			return nil, errSlow
		}
	}
	f.i = j
	lit := b[start:j]
	// string(lit) does not escape below, so it is not allocated for a
	// short literal.
	switch f.t.o.Numbers {
	case Native:
		if i, err := strconv.ParseInt(string(lit), 10, 64); err == nil {
			return i, nil
		}
		x, _ := strconv.ParseFloat(string(lit), 64) // a JSON number always parses
		return x, nil
	default:
		if _, err := strconv.ParseInt(string(lit), 10, 64); err != nil {
			if _, err := strconv.ParseFloat(string(lit), 64); err != nil {
				return nil, ErrNumber
			}
		}
		return json.Number(string(lit)), nil
	}
}

func (f *fast) object() (any, error) {
	f.i++ // '{'
	if f.depth++; f.depth > fastDepth {
		return nil, errSlow
	}
	t := f.t
	m := map[string]any{}
	c := f.ws()
	if c == '}' {
		f.i++
		f.depth--
		return m, nil
	}
	for {
		if c != '"' {
			return nil, errSlow
		}
		kb, err := f.str()
		if err != nil {
			return nil, err
		}
		if f.ws() != ':' {
			return nil, errSlow
		}
		f.i++
		k := t.key(kb)
		if t.o.Duplicates {
			t.path = append(t.path, step{k, -1})
			if _, dup := m[k]; dup && len(t.dups) < maxDuplicates {
				t.duplicate()
			}
		}
		v, err := f.value()
		if err != nil {
			return nil, err
		}
		if t.o.Duplicates {
			t.path = t.path[:len(t.path)-1]
		}
		m[k] = v
		switch f.ws() {
		case ',':
			f.i++
			c = f.ws()
		case '}':
			f.i++
			f.depth--
			return m, nil
		default:
			return nil, errSlow
		}
	}
}

func (f *fast) array() (any, error) {
	f.i++ // '['
	if f.depth++; f.depth > fastDepth {
		return nil, errSlow
	}
	t := f.t
	l := []any{}
	if f.ws() == ']' {
		f.i++
		f.depth--
		return l, nil
	}
	for i := 0; ; i++ {
		if t.o.Duplicates {
			t.path = append(t.path, step{"", i})
		}
		v, err := f.value()
		if err != nil {
			return nil, err
		}
		if t.o.Duplicates {
			t.path = t.path[:len(t.path)-1]
		}
		l = append(l, v)
		switch f.ws() {
		case ',':
			f.i++
		case ']':
			f.i++
			f.depth--
			return l, nil
		default:
			return nil, errSlow
		}
	}
}

// Interned keys: a decoder keeps the strings of the short keys it met,
// so that the next objects it decodes share them (the keys of the
// objects of one resource are mostly the same).
const (
	maxKeys   = 512
	maxKeyLen = 32
)

// key is the string of the key k, interned if short.
func (t *decoder) key(k []byte) string {
	if len(k) > maxKeyLen {
		return string(k)
	}
	if s, ok := t.keys[string(k)]; ok {
		return s
	}
	if t.keys == nil || len(t.keys) >= maxKeys {
		t.keys = make(map[string]string, 64)
	}
	s := string(k)
	t.keys[s] = s
	return s
}
