package jsontree

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// Numbers says how Decode holds numbers.
type Numbers int

const (
	// Exact numbers are encoding/json.Number, as encoding/json's
	// Decoder.UseNumber gives them; a number that is neither an int64 nor
	// a float64 (1e400) fails the decode with ErrNumber.
	Exact Numbers = iota
	// Native numbers are int64 when integers that fit and float64
	// otherwise (±Inf beyond float64's range), as client-go's unstructured
	// objects hold them (jsonval.Number).
	Native
)

// Options configure Decode.
type Options struct {
	Numbers Numbers
	// Duplicates asks for the keys an object gives twice, in kube's form
	// (`duplicate field "spec.ports[0].port"`): in the order met, each
	// path once, at most 100. The last value of a key wins either way.
	Duplicates bool
}

// maxDuplicates bounds the duplicate fields reported, as kube bounds them.
const maxDuplicates = 100

// ErrNumber is Decode's error for a number Exact refuses.
var ErrNumber = errors.New("jsontree: number out of range")

// errTrailing is Decode's error for data after the value.
var errTrailing = errors.New("jsontree: data after the JSON value")

// opts are encoding/json's decode semantics on jsontext: a duplicate
// name is allowed (Decode reports it), invalid UTF-8 becomes U+FFFD.
var opts = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

type decoder struct {
	buf  bytes.Buffer // jsontext reads a bytes.Buffer's bytes in place
	d    *jsontext.Decoder
	o    Options
	path []step
	dups []string
	seen map[string]bool
	keys map[string]string // see key
	// scratch holds a string being unescaped by the fast decoder.
	scratch []byte
}

// step is one step of the path to the value being decoded: a key, or an
// index (i ≥ 0).
type step struct {
	key string
	i   int
}

var pool = sync.Pool{New: func() any {
	t := new(decoder)
	t.d = jsontext.NewDecoder(&t.buf, opts...)
	return t
}}

// Decode decodes b, one JSON value with nothing but whitespace after it,
// and with o.Duplicates its duplicate keys. On an error the caller
// decodes again with encoding/json for the message kapi quotes; Decode's
// own errors say little.
func Decode(b []byte, o Options) (v any, dups []string, err error) {
	return decode(b, o, true)
}

// decode is Decode, on the fast decoder first if useFast, then on
// jsontext if the fast one gave up.
func decode(b []byte, o Options, useFast bool) (v any, dups []string, err error) {
	t := pool.Get().(*decoder)
	t.buf = *bytes.NewBuffer(b)
	t.d.Reset(&t.buf, opts...)
	t.o, t.path, t.dups, t.seen = o, t.path[:0], nil, nil
	err = errSlow
	if useFast {
		f := fast{b: b, t: t}
		v, err = f.value()
		if err == nil && (f.ws() != 0 || f.i != len(b)) {
			err = errTrailing
		}
	}
	if err != nil { // decode (again) on jsontext, for its result
		t.path, t.dups, t.seen = t.path[:0], nil, nil
		v, err = t.value()
		if err == nil {
			if _, err = t.d.ReadToken(); err == io.EOF {
				err = nil
			} else if err == nil {
				err = errTrailing
			}
		}
	}
	dups = t.dups
	t.buf = bytes.Buffer{}
	t.d.Reset(&t.buf, opts...) // drop the reference to b
	t.dups, t.seen = nil, nil
	if cap(t.scratch) > 64<<10 {
		t.scratch = nil
	}
	clear(t.path[:cap(t.path)])
	pool.Put(t)
	if err != nil {
		return nil, nil, err
	}
	return v, dups, nil
}

func (t *decoder) value() (any, error) {
	tok, err := t.d.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case 'n':
		return nil, nil
	case 'f', 't':
		return tok.Bool(), nil
	case '"':
		return tok.String(), nil
	case '0':
		return t.number(tok)
	case '{':
		m := map[string]any{}
		for t.d.PeekKind() != '}' {
			kt, err := t.d.ReadToken()
			if err != nil {
				return nil, err
			}
			k := kt.String()
			if t.o.Duplicates {
				t.path = append(t.path, step{k, -1})
				if _, dup := m[k]; dup && len(t.dups) < maxDuplicates {
					t.duplicate()
				}
			}
			v, err := t.value()
			if err != nil {
				return nil, err
			}
			if t.o.Duplicates {
				t.path = t.path[:len(t.path)-1]
			}
			m[k] = v
		}
		_, err := t.d.ReadToken()
		return m, err
	case '[':
		l := []any{}
		for i := 0; t.d.PeekKind() != ']'; i++ {
			if t.o.Duplicates {
				t.path = append(t.path, step{"", i})
			}
			v, err := t.value()
			if err != nil {
				return nil, err
			}
			if t.o.Duplicates {
				t.path = t.path[:len(t.path)-1]
			}
			l = append(l, v)
		}
		_, err := t.d.ReadToken()
		return l, err
	}
	return nil, errors.New("jsontree: unexpected token " + tok.Kind().String())
}

func (t *decoder) number(tok jsontext.Token) (any, error) {
	s := tok.String()
	switch t.o.Numbers {
	case Native:
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, nil
		}
		f, _ := strconv.ParseFloat(s, 64) // a JSON number always parses
		return f, nil
	default:
		if _, err := strconv.ParseInt(s, 10, 64); err != nil {
			if _, err := strconv.ParseFloat(s, 64); err != nil {
				return nil, ErrNumber
			}
		}
		return json.Number(s), nil
	}
}

// duplicate records the current path as a duplicate field, once. The
// path is kube's: keys joined by '.' (none before the first non-empty
// part), indexes as "[i]".
func (t *decoder) duplicate() {
	var s strings.Builder
	for _, p := range t.path {
		if p.i >= 0 {
			s.WriteString("[" + strconv.Itoa(p.i) + "]")
			continue
		}
		if s.Len() > 0 {
			s.WriteByte('.')
		}
		s.WriteString(p.key)
	}
	p := s.String()
	if t.seen[p] {
		return
	}
	if t.seen == nil {
		t.seen = map[string]bool{}
	}
	t.seen[p] = true
	t.dups = append(t.dups, `duplicate field "`+p+`"`)
}

// Valid reports whether b is one JSON value, accepting what
// encoding/json's Valid accepts (duplicate names, invalid UTF-8, nesting
// to 10000) at jsontext's speed.
func Valid(b []byte) bool {
	return jsontext.Value(b).IsValid(opts...)
}
