package jsonobj

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// decodeSeeds are bodies that exercise what Decode must answer as
// encoding/json does: the cases of bench/jsoncmp's semantics tests
// (duplicates, 2^53+1, invalid UTF-8), the numbers and trailing data the
// registry's tests and conformance/badinput_test.go send, and bodies from
// the registry's tests.
var decodeSeeds = []string{
	`{"a":1,"a":2}`, `{"a":9007199254740993}`, "{\"a\":\"x\xffy\"}",
	`{"spec":{"a":1,"a":2}}`, `{"a":1,"a":{"b":1,"b":2},"a":{"b":3,"b":4}}`,
	`{"":{"b":1,"b":2},"":1}`, `[{"a":1,"a":2}]`, `{"l":[{"x":1,"x":2},{"x":1,"x":2}]}`,
	`{"n":1e400}`, `{"n":-1e400}`, `{"n":-0}`, `{"n":-0.0}`, `{"n":1e-400}`, `{"n":18446744073709551616}`,
	`{"n":9223372036854775807}`, `{"n":-9223372036854775809}`, `{"n":1.0}`, `{"n":1E+2}`, `{"n":01}`,
	`{"s":"\ud800"}`, `{"s":"\ud800\u0041"}`, `{"s":"\udc00\ud800"}`, `{"s":"\ud83d\ude00"}`, `{"s":"\u0000<>&"}`,
	"{\"s\":\"\xed\xa0\x80\"}", "{\"s\":\"\xf4\x90\x80\x80\"}", "{\"k\xff\":1,\"k\xfe\":2}",
	`{"a":1}`, ` {"a":1} `, "\t{}\r\n", `{}`, ``, ` `, `null`, `[]`, `"s"`, `1`, `true`,
	`{"a":1}{"b":2}`, `{"a":1}]`, `{"a":1} }x`, `{"a":1}x`, `{"a":1} 1`, `[1]}`, `1}`, `"a"]`,
	`{"a":}`, `{"a"`, `{"a":1,}`, `{,}`, `{"a":[1,]}`, `{'a':1}`, `{"a":tru}`, `{"a":nul}`, "\xef\xbb\xbf{}",
	`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","labels":{"x":"y"}},"spec":{"color":"red","replicas":3}}`,
	`{"metadata":{"name":"a","bogus":1},"spec":{"size":1,"size":2,"colour":"x"}}`,
	`{"spec":{"ports":[{"port":80,"protocol":"TCP","name":"x"},{"$patch":"delete","port":81,"protocol":"TCP"}],"$setElementOrder/ports":[{"port":80,"protocol":"TCP"}]}}`,
	`[{"op":"add","path":"/spec/x","value":{"a":[1,2]}}]`,
}

// deepSeeds are FuzzDecode's checks at encoding/json's nesting limit,
// kept out of its corpus: mutating 20 KB inputs slows the fuzzer down
// (Duplicates builds paths quadratic in the depth).
var deepSeeds = []string{
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	`{"a":` + strings.Repeat("[", 9999) + `{"b":1,"b":2}` + strings.Repeat("]", 9999) + `}`,
	`{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
}

func TestDecodeDeep(t *testing.T) {
	for _, s := range deepSeeds {
		checkDecode(t, []byte(s))
	}
}

// FuzzDecode holds Decode (jsontree's decoder, encoding/json where it
// refuses) to the encoding/json path it replaced — decodeStd, then
// Duplicates — on arbitrary bytes: the same tree, the same error
// text, the same duplicate fields; and PatchDuplicates to its
// json.Unmarshal form.
func FuzzDecode(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkDecode)
}

// checkDecode is FuzzDecode's comparison.
func checkDecode(t *testing.T, b []byte) {
	want, wantErr := decodeStd(b)
	var wantDups []string
	if wantErr == nil {
		wantDups = Duplicates(b, want)
	}
	for _, dups := range []bool{false, true} {
		got, gotDups, gotErr := Decode(b, dups)
		if errText(gotErr) != errText(wantErr) {
			t.Fatalf("Decode(%q, %v): got error %v; want %v", b, dups, gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Decode(%q, %v): got %#v; want %#v", b, dups, got, want)
		}
		if !dups {
			wantDups := []string(nil)
			if !slices.Equal(gotDups, wantDups) {
				t.Fatalf("Decode(%q, false): got duplicates %q; want none", b, gotDups)
			}
			continue
		}
		if !slices.Equal(gotDups, wantDups) {
			t.Fatalf("Decode(%q, true): got duplicates %q; want %q", b, gotDups, wantDups)
		}
	}
	var wantPatch []string
	var v any
	if json.Unmarshal(b, &v) == nil {
		wantPatch = Duplicates(b, v)
	}
	if got := PatchDuplicates(b); !slices.Equal(got, wantPatch) {
		t.Fatalf("PatchDuplicates(%q): got %q; want %q", b, got, wantPatch)
	}
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// TestDecodeTrailingData: a body is one JSON object and nothing after it
// but whitespace, whatever follows (kube refuses such bodies with 400).
func TestDecodeTrailingData(t *testing.T) {
	for _, s := range []string{`{"a":1}]`, `{"a":1}]xyz`, `{"a":1} }x`, `{"a":1}x`, `{"a":1}{"b":2}`, `{"a":1} 1`} {
		if _, _, err := Decode([]byte(s), false); err == nil {
			t.Errorf("Decode(%q): got no error; want one for the data after the object", s)
		}
	}
	if _, _, err := Decode([]byte(" {\"a\":1} \r\n\t"), false); err != nil {
		t.Errorf("Decode with whitespace around: got %v; want none", err)
	}
}
