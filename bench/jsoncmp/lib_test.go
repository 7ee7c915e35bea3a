package jsoncmp

import (
	"bytes"
	"reflect"
	"slices"
	"testing"
)

// sizes are the benchmark objects: a typical object and a large one.
var sizes = []struct {
	name string
	size int
}{{"2KiB", 2 << 10}, {"100KiB", 100 << 10}}

func TestObjectSizes(t *testing.T) {
	for _, s := range sizes {
		got := len(Encode(Object(s.size)))
		if got < s.size || got > s.size*11/10 {
			t.Errorf("%s: got %d bytes; want %d to %d", s.name, got, s.size, s.size*11/10)
		}
	}
}

// TestSameResults checks that the benchmarks compare like with like: every
// library decodes the objects to the same tree (numbers compared by text)
// and encodes them to encoding/json's bytes exactly.
func TestSameResults(t *testing.T) {
	std := func(s string) any { return Find("encoding/json").Number(s) }
	for _, s := range sizes {
		obj := Object(s.size)
		b := Encode(obj)
		for _, l := range Libs {
			if l.Unmarshal != nil {
				got, err := l.Unmarshal(b)
				if err != nil {
					t.Fatalf("%s %s: Unmarshal: %v", l.Name, s.name, err)
				}
				if !reflect.DeepEqual(Renumber(got, std), obj) {
					t.Errorf("%s %s: Unmarshal: got a different tree", l.Name, s.name)
				}
			}
			if l.Marshal != nil {
				out, err := l.Marshal(Renumber(obj, l.Number))
				if err != nil {
					t.Fatalf("%s %s: Marshal: %v", l.Name, s.name, err)
				}
				if !bytes.Equal(out, b) {
					t.Errorf("%s %s: Marshal: got %d bytes differing from encoding/json's %d", l.Name, s.name, len(out), len(b))
				}
			}
			if l.Valid != nil {
				if !l.Valid(b) {
					t.Errorf("%s %s: Valid: got false; want true", l.Name, s.name)
				}
				if l.Valid(b[:len(b)-1]) {
					t.Errorf("%s %s: Valid of a truncated object: got true; want false", l.Name, s.name)
				}
			}
		}
	}
}

func TestDecodeTreeDuplicates(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{`{"a":1,"b":2}`, nil},
		{`{"a":1,"a":2}`, []string{`duplicate field "a"`}},
		{`{"spec":{"ports":[{"port":1,"port":2}]}}`, []string{`duplicate field "spec.ports[0].port"`}},
		{`{"a":{"x":1},"a":{"y":2}}`, []string{`duplicate field "a"`}},
		{`[{"k":1},{"k":1,"k":2}]`, []string{`duplicate field "[1].k"`}},
	} {
		_, got, err := DecodeTree([]byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: got %q; want %q", c.in, got, c.want)
		}
	}
}

func TestDecodeTreeErrors(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a":}`, `{"a":1}x`, `{"a":1} {}`, `[1,]`, `{"a" 1}`} {
		if _, _, err := DecodeTree([]byte(in)); err == nil {
			t.Errorf("%q: got no error; want one", in)
		}
	}
}
