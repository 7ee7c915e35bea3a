package jsontree

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	for _, c := range []struct {
		name, in string
		o        Options
		want     any
		dups     []string
	}{
		{"object", `{"a":[1,"x",true,null,{}]}`, Options{}, map[string]any{"a": []any{json.Number("1"), "x", true, nil, map[string]any{}}}, nil},
		{"2^53+1 exact", `9007199254740993`, Options{}, json.Number("9007199254740993"), nil},
		{"2^53+1 native", `9007199254740993`, Options{Numbers: Native}, int64(9007199254740993), nil},
		{"-0 native", `[-0,-0.0]`, Options{Numbers: Native}, []any{int64(0), math.Copysign(0, -1)}, nil},
		{"1e400 native", `1e400`, Options{Numbers: Native}, math.Inf(1), nil},
		{"invalid UTF-8", "\"x\xffy\"", Options{}, "x\uFFFDy", nil},
		{"last wins", `{"a":1,"a":2}`, Options{}, map[string]any{"a": json.Number("2")}, nil},
		{"duplicates in order, once each", `{"a":1,"a":{"b":1,"b":2},"a":{"b":3,"b":4},"l":[{"x":1,"x":2}]}`, Options{Duplicates: true},
			map[string]any{"a": map[string]any{"b": json.Number("4")}, "l": []any{map[string]any{"x": json.Number("2")}}},
			[]string{`duplicate field "a"`, `duplicate field "a.b"`, `duplicate field "l[0].x"`}},
		{"empty keys join as encoding/json's walk did", `{"":{"":1,"b":1,"b":2},"":1}`, Options{Duplicates: true},
			map[string]any{"": json.Number("1")}, []string{`duplicate field "b"`, `duplicate field ""`}},
	} {
		got, dups, err := Decode([]byte(c.in), c.o)
		if err != nil {
			t.Errorf("%s: got error %v; want none", c.name, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) || fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", c.want) { // %#v tells -0 from 0
			t.Errorf("%s: got %#v; want %#v", c.name, got, c.want)
		}
		if !slices.Equal(dups, c.dups) {
			t.Errorf("%s: got duplicates %q; want %q", c.name, dups, c.dups)
		}
	}
}

func TestDecodeRefuses(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a":1}]`, `{"a":1} x`, `{"a":1}{}`, `{"a":01}`, "\xef\xbb\xbf{}",
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001)} {
		if _, _, err := Decode([]byte(in), Options{}); err == nil {
			t.Errorf("Decode(%.20q): got no error; want one", in)
		}
	}
	if _, _, err := Decode([]byte(`{"n":1e400}`), Options{}); !errors.Is(err, ErrNumber) {
		t.Errorf("Decode(1e400) with Exact numbers: got %v; want ErrNumber", err)
	}
}

func TestDecodeDepth(t *testing.T) {
	deep := func(n int) []byte { return []byte(strings.Repeat("[", n) + strings.Repeat("]", n)) }
	var v any
	for _, c := range []struct {
		n    int
		want bool
	}{{10000, true}, {10001, false}} {
		_, _, err := Decode(deep(c.n), Options{})
		if got, std := err == nil, json.Unmarshal(deep(c.n), &v) == nil; got != c.want || std != c.want {
			t.Errorf("depth %d: Decode accepts: %v, encoding/json: %v; want %v", c.n, got, std, c.want)
		}
	}
}

func TestDecodeConcurrent(t *testing.T) {
	in := []byte(`{"a":{"b":[1,2,{"c":"d","c":"e"}]}}`)
	want, wantDups, _ := Decode(in, Options{Duplicates: true})
	done := make(chan struct{})
	for range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 200 {
				got, dups, err := Decode(in, Options{Duplicates: true})
				if err != nil || !reflect.DeepEqual(got, want) || !slices.Equal(dups, wantDups) {
					t.Errorf("got %v, %q, %v; want %v, %q", got, dups, err, want, wantDups)
					return
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
}

// FuzzValid holds Valid to encoding/json's Valid on arbitrary bytes.
func FuzzValid(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, "{\"a\":\"x\xffy\"}", `{"s":"\ud800"}`, "\"\xed\xa0\x80\"", `{"a":1}]`,
		` {} `, ``, `01`, `-0`, `1e400`, `[1,]`, "\xef\xbb\xbf{}", `"\u00"`, "\"\x7f\"", "\"\x1f\"",
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000), strings.Repeat("[", 10001) + strings.Repeat("]", 10001)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q): got %v; want %v", b, got, want)
		}
	})
}
