package jsoncmp

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

// treeOpts keep kube's decode semantics on jsontext's tokenizer: a
// duplicate name is allowed (the last wins; DecodeTree reports it, as
// kube's strict decoding does) and invalid UTF-8 becomes U+FFFD, as
// encoding/json does.
var treeOpts = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

type treeDecoder struct {
	r    bytes.Reader
	d    *jsontext.Decoder
	path []elem
	dups []string
}

// elem is one step of the path to the value being decoded: a key, or an
// index (key "" and i ≥ 0).
type elem struct {
	key string
	i   int
}

var treePool = sync.Pool{New: func() any {
	t := new(treeDecoder)
	t.d = jsontext.NewDecoder(&t.r, treeOpts...)
	return t
}}

// DecodeTree decodes one JSON value as kapi holds it (maps, []any,
// strings, bools, nil, numbers as json.Number) on jsontext's token reader,
// and returns the duplicate fields it met in kube's form
// (`duplicate field "spec.ports[0].port"`) in the same pass. Data after
// the value is an error. It is what kapi's decodeObject and duplicateFields
// would be on encoding/json/v2's tokenizer.
func DecodeTree(b []byte) (any, []string, error) {
	t := treePool.Get().(*treeDecoder)
	t.r.Reset(b)
	t.d.Reset(&t.r, treeOpts...)
	t.path, t.dups = t.path[:0], nil
	v, err := t.value()
	if err == nil {
		if _, err = t.d.ReadToken(); err == io.EOF {
			err = nil
		} else if err == nil {
			err = errors.New("unexpected data after the JSON value")
		}
	}
	dups := t.dups
	t.r.Reset(nil)
	treePool.Put(t)
	if err != nil {
		return nil, nil, err
	}
	return v, dups, nil
}

func (t *treeDecoder) value() (any, error) {
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
		return json.Number(tok.String()), nil
	case '{':
		m := map[string]any{}
		for t.d.PeekKind() != '}' {
			kt, err := t.d.ReadToken()
			if err != nil {
				return nil, err
			}
			k := kt.String()
			t.path = append(t.path, elem{k, -1})
			v, err := t.value()
			if err != nil {
				return nil, err
			}
			if _, dup := m[k]; dup && len(t.dups) < 100 {
				t.dups = append(t.dups, `duplicate field "`+t.pathString()+`"`)
			}
			t.path = t.path[:len(t.path)-1]
			m[k] = v
		}
		_, err := t.d.ReadToken()
		return m, err
	case '[':
		l := []any{}
		for i := 0; t.d.PeekKind() != ']'; i++ {
			t.path = append(t.path, elem{"", i})
			v, err := t.value()
			if err != nil {
				return nil, err
			}
			t.path = t.path[:len(t.path)-1]
			l = append(l, v)
		}
		_, err := t.d.ReadToken()
		return l, err
	}
	return nil, errors.New("unexpected token " + tok.Kind().String())
}

// pathString renders the current path as kube does: keys joined by '.',
// indexes appended.
func (t *treeDecoder) pathString() string {
	var s strings.Builder
	for i, p := range t.path {
		switch {
		case p.i >= 0:
			s.WriteString("[" + strconv.Itoa(p.i) + "]")
		case i > 0:
			s.WriteByte('.')
			fallthrough
		default:
			s.WriteString(p.key)
		}
	}
	return s.String()
}
