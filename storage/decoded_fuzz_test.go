package storage

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// FuzzDecodeMap holds decodeMap (jsontree's decoder, encoding/json where
// it refuses) to decodeMapStd, the encoding/json decode it replaced, on
// arbitrary bytes: the same map (int64 and float64 numbers), the same
// error text.
func FuzzDecodeMap(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"a":2}`, `{"a":9007199254740993}`, "{\"a\":\"x\xffy\"}", `{"metadata":"x"}`, `{"metadata":{"name":"a"}}`,
		`{"n":1e400}`, `{"n":-1e400}`, `{"n":-0}`, `{"n":-0.0}`, `{"n":1e-400}`, `{"n":18446744073709551616}`,
		`{"n":9223372036854775807}`, `{"n":-9223372036854775809}`, `{"n":1.0}`, `{"n":1E+2}`, `{"n":01}`,
		`{"s":"\ud800"}`, `{"s":"\ud800\u0041"}`, `{"s":"\ud83d\ude00"}`, "{\"s\":\"\xed\xa0\x80\"}",
		`{}`, ``, `null`, `[]`, `"s"`, `1`, `{"a":1}{"b":2}`, `{"a":1}]`, `{"a":1} `, `{"a":1}x`, `{"a":}`, `{"a"`,
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","labels":{"x":"y"}},"spec":{"color":"red","replicas":3,"f":1.5}}`,
		`{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
		`{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want, wantErr := decodeMapStd(b, 7)
		got, gotErr := decodeMap(b, 7)
		if errText(gotErr) != errText(wantErr) {
			t.Fatalf("decodeMap(%q): got error %v; want %v", b, gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) || fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) { // %#v tells -0 from 0

			t.Fatalf("decodeMap(%q): got %#v; want %#v", b, got, want)
		}
	})
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
