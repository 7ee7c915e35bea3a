package jsontree

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// fastCases are inputs the fast decoder reads or hands to jsontext.
var fastCases = []string{
	`{"a":[1,"x",true,null,{}],"b":{"c":-0.5e+3,"d":[]}}`, ` { "a" : [ 1 , 2 ] } `, "\t[\r\n]\n",
	`{"a":1,"a":2}`, `{"a":{"b":1,"b":2},"a":{"b":3,"b":4},"l":[{"x":1,"x":2}]}`, `{"":{"":1,"b":1,"b":2},"":1}`,
	`"héllo wörld"`, "\"x\xffy\"", `"a\"b"`, `"\u00e9"`, `"\ud800"`, `"\ud83d\ude00"`, `"\uDFFF"`, `"\u12"`, `"\u12G4"`, `"\x"`,
	`"\"\\\/\b\f\n\r\t\u0000\u001f\u00E9\u20AC\uFFFF"`, `"a\`, `"\`, `{"k:{\"port\":80}":{".":{}},"x\ny":"é\té"}`, "\"\\n\xff\"", "\"\xc3\\n\xa9\"", "\"\x7f\"", "\"\x1f\"", `"`, `"abc`,
	`0`, `-0`, `-0.0`, `01`, `1.`, `.1`, `1e`, `1e+`, `-`, `+1`, `1E5`, `9007199254740993`, `9223372036854775808`,
	`-9223372036854775809`, `1e400`, `-1e400`, `1e-400`, `123456789012345678901234567890`, `0.1e1`,
	`true`, `false`, `null`, `tru`, `nul`, `truex`, `[true false]`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{a:1}`,
	`{"a":1}}`, `{"a":1} x`, `{"a":1}{}`, "{}\x00", ``, ` `, "\xef\xbb\xbf{}", `[1 2]`, `{"a":1 "b":2}`,
	strings.Repeat("[", 1001) + strings.Repeat("]", 1001), strings.Repeat(`{"a":`, 999) + "1" + strings.Repeat("}", 999),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
}

// checkFast holds Decode (the fast decoder, then jsontext) to the
// jsontext decoder alone, and both to encoding/json.
func checkFast(t *testing.T, b []byte, o Options) {
	got, gotDups, gotErr := decode(b, o, true)
	want, wantDups, wantErr := decode(b, o, false)
	if (gotErr == nil) != (wantErr == nil) || gotErr != nil && (gotErr == ErrNumber) != (wantErr == ErrNumber) {
		t.Fatalf("Decode(%q, %+v): got error %v; jsontext's %v", b, o, gotErr, wantErr)
	}
	if g, w := fmt.Sprintf("%#v", got), fmt.Sprintf("%#v", want); g != w { // %#v tells -0 from 0 and int64 from float64
		t.Fatalf("Decode(%q, %+v): got %s; jsontext's %s", b, o, g, w)
	}
	if !slices.Equal(gotDups, wantDups) {
		t.Fatalf("Decode(%q, %+v): got duplicates %q; jsontext's %q", b, o, gotDups, wantDups)
	}
	if o.Numbers != Exact {
		return
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var std any
	stdErr := d.Decode(&std)
	if stdErr == nil {
		if _, err := d.Token(); err == nil {
			stdErr = errTrailing
		}
	}
	if gotErr == nil && stdErr != nil {
		t.Fatalf("Decode(%q): got %#v; encoding/json fails: %v", b, got, stdErr)
	}
	if gotErr == nil && fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", std) {
		t.Fatalf("Decode(%q): got %#v; encoding/json's %#v", b, got, std)
	}
}

func TestFastDecode(t *testing.T) {
	for _, c := range fastCases {
		for _, o := range []Options{{}, {Numbers: Native}, {Duplicates: true}, {Numbers: Native, Duplicates: true}} {
			checkFast(t, []byte(c), o)
		}
	}
}

// TestFastDecodeReads checks that the fast decoder, not only its
// fallback, reads the common input: Decode of it allocates less than
// the jsontext decoder.
func TestFastDecodeReads(t *testing.T) {
	in := []byte(`{"apiVersion":"v1","kind":"W","metadata":{"name":"a","labels":{"x":"y"}},"spec":{"n":[1,2.5,-3],"s":"é","k:{\"a\":1}":"\u00e9\n"}}`)
	fastAllocs := testing.AllocsPerRun(100, func() { decode(in, Options{Duplicates: true}, true) })
	slowAllocs := testing.AllocsPerRun(100, func() { decode(in, Options{Duplicates: true}, false) })
	if fastAllocs >= slowAllocs {
		t.Errorf("allocations: got %v with the fast decoder, %v without; want fewer", fastAllocs, slowAllocs)
	}
	f := fast{b: in, t: &decoder{}}
	if _, err := f.value(); err != nil {
		t.Errorf("fast decoder: got error %v; want none", err)
	}
}

// FuzzDecode holds Decode to the jsontext decoder and encoding/json on
// arbitrary bytes, with each of its options.
func FuzzDecode(f *testing.F) {
	for _, c := range fastCases {
		f.Add([]byte(c), uint8(0))
	}
	f.Fuzz(func(t *testing.T, b []byte, opt uint8) {
		checkFast(t, b, Options{Numbers: Numbers(opt & 1), Duplicates: opt&2 != 0})
	})
}
