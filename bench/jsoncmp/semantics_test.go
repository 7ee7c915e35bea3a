package jsoncmp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/bytedance/sonic"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	gojson "github.com/goccy/go-json"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kjson "sigs.k8s.io/json"
)

// These tests record what each library does with the behaviours kube's
// JSON handling relies on. The wants are the facts as measured (with
// go-json-experiment v1.27.2, goccy/go-json v0.12.0, sonic v1.15.5 and Go
// 1.26 without GOEXPERIMENT=jsonv2); "kube" is what kube-apiserver does:
// sigs.k8s.io/json to decode, encoding/json through apimachinery to
// encode.

// outcome describes a decoded value for the tables: "error", or its type
// and value.
func outcome(v any, err error) string {
	if err != nil {
		return "error"
	}
	t := reflect.TypeOf(v)
	if t == nil {
		return "nil"
	}
	name := t.String()
	if strings.Contains(t.PkgPath(), "go-json-experiment") && t != reflect.TypeFor[json.Number]() {
		name = "jsonv1.Number"
	}
	return fmt.Sprintf("%s(%v)", name, v)
}

// field decodes in with l and returns the outcome of key "a".
func field(l Lib, in string) string {
	v, err := l.Unmarshal([]byte(in))
	if err != nil {
		return "error"
	}
	return outcome(v.(map[string]any)["a"], nil)
}

// gjeNumber is how go-json-experiment's v1 and v2 hand back a number: its
// own Number type, which is encoding/json.Number only where
// GOEXPERIMENT=jsonv2 (Go 1.27's default) makes the module an alias of
// the standard library.
var gjeNumber = func() string {
	if reflect.TypeFor[jsonv1.Number]() == reflect.TypeFor[json.Number]() {
		return "json.Number"
	}
	return "jsonv1.Number"
}()

func TestDecodeSemantics(t *testing.T) {
	const (
		dup     = `{"a":1,"a":2}`
		bigInt  = `{"a":9007199254740993}`
		badUTF8 = "{\"a\":\"x\xffy\"}"
	)
	for _, c := range []struct {
		lib                  string
		dup, bigInt, badUTF8 string
	}{
		{"encoding/json", "json.Number(2)", "json.Number(9007199254740993)", "string(x\uFFFDy)"},
		{"encoding/json float64", "float64(2)", "float64(9.007199254740992e+15)", "string(x\uFFFDy)"},
		{"sigs.k8s.io/json", "int64(2)", "int64(9007199254740993)", "string(x\uFFFDy)"},
		{"go-json-experiment v1", gjeNumber + "(2)", gjeNumber + "(9007199254740993)", "string(x\uFFFDy)"},
		{"go-json-experiment v2", "error", "float64(9.007199254740992e+15)", "error"},
		{"jsontext tree", "json.Number(2)", "json.Number(9007199254740993)", "string(x\uFFFDy)"},
		{"goccy/go-json", "json.Number(2)", "json.Number(9007199254740993)", "string(x\uFFFDy)"},
		{"bytedance/sonic", "json.Number(2)", "json.Number(9007199254740993)", "string(x\uFFFDy)"},
	} {
		l := Find(c.lib)
		if exact := !strings.HasPrefix(c.bigInt, "float64"); l.Exact != exact {
			t.Errorf("%s: Lib.Exact is %v; the decode says %v", c.lib, l.Exact, exact)
		}
		for _, f := range []struct{ name, in, want string }{
			{"duplicate key", dup, c.dup},
			{"integer 2^53+1", bigInt, c.bigInt},
			{"invalid UTF-8", badUTF8, c.badUTF8},
		} {
			if got := field(l, f.in); got != f.want {
				t.Errorf("%s, %s: got %s; want %s", c.lib, f.name, got, f.want)
			}
		}
	}
}

// TestDuplicateReports: kube's strict decoding names duplicate fields
// (kapi answers them per fieldValidation); of the candidates only the
// jsontext tree reports them (v2 refuses the body, the others keep the
// last value silently, as encoding/json does).
func TestDuplicateReports(t *testing.T) {
	in := []byte(`{"spec":{"a":1,"a":2}}`)
	var m map[string]any
	strict, err := kjson.UnmarshalStrict(in, &m)
	if err != nil || len(strict) != 1 || strict[0].Error() != `duplicate field "spec.a"` {
		t.Errorf("kube: got %v, %v; want one duplicate field \"spec.a\"", strict, err)
	}
	_, dups, err := DecodeTree(in)
	if err != nil || len(dups) != 1 || dups[0] != `duplicate field "spec.a"` {
		t.Errorf("jsontext tree: got %q, %v; want [duplicate field \"spec.a\"]", dups, err)
	}
}

type named struct {
	Name string `json:"name"`
}

// TestCaseSensitiveFields decodes {"NAME":"x"} into a struct whose field
// is "name": kube (and the v2 API) ignore the key; encoding/json and the
// libraries compatible with it match it case-insensitively.
func TestCaseSensitiveFields(t *testing.T) {
	in := []byte(`{"NAME":"x"}`)
	sonicStruct := sonic.Config{EscapeHTML: true, SortMapKeys: true, CompactMarshaler: true, CopyString: true, ValidateString: true}.Froze()
	for _, c := range []struct {
		lib       string
		unmarshal func([]byte, any) error
		want      string
	}{
		{"encoding/json", json.Unmarshal, "x"},
		{"sigs.k8s.io/json", kjson.UnmarshalCaseSensitivePreserveInts, ""},
		{"go-json-experiment v1", jsonv1.Unmarshal, "x"},
		{"go-json-experiment v2", func(b []byte, v any) error { return jsonv2.Unmarshal(b, v) }, ""},
		{"goccy/go-json", gojson.Unmarshal, "x"},
		{"bytedance/sonic", sonicStruct.Unmarshal, "x"},
	} {
		var got named
		if err := c.unmarshal(in, &got); err != nil {
			t.Fatalf("%s: %v", c.lib, err)
		}
		if got.Name != c.want {
			t.Errorf("%s: got name %q; want %q", c.lib, got.Name, c.want)
		}
	}
}

// encoders: each library's map encoder as kapi would call it, and kube's.
func encoders() []struct {
	lib     string
	marshal func(any) ([]byte, error)
} {
	return []struct {
		lib     string
		marshal func(any) ([]byte, error)
	}{
		{"kube", func(v any) ([]byte, error) {
			var b bytes.Buffer
			err := unstructured.UnstructuredJSONScheme.Encode(&unstructured.Unstructured{Object: v.(map[string]any)}, &b)
			return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
		}},
		{"encoding/json", json.Marshal},
		{"go-json-experiment v1", jsonv1.Marshal},
		{"go-json-experiment v2 defaults", func(v any) ([]byte, error) { return jsonv2.Marshal(v) }},
		{"go-json-experiment v2 kube options", func(v any) ([]byte, error) { return jsonv2.Marshal(v, v2Kube) }},
		{"go-json-experiment v2 json.Number", Find("go-json-experiment v2 json.Number").Marshal},
		{"go-json-experiment v2 json.Number, invalid UTF-8 allowed", func(v any) ([]byte, error) {
			return jsonv2.Marshal(v, v2KubeStd, jsontext.AllowInvalidUTF8(true))
		}},
		{"goccy/go-json", gojson.Marshal},
		{"bytedance/sonic", sonicStd.Marshal},
	}
}

func TestEncodeSemantics(t *testing.T) {
	// Invalid UTF-8 becomes U+FFFD, written as \ufffd by encoding/json
	// (so by kube-apiserver) and as the raw character by v2 and by
	// encoding/json on v2 (GOEXPERIMENT=jsonv2, Go 1.27's default).
	stdBad := `"x\ufffdy"`
	if gjeNumber == "json.Number" {
		stdBad = "\"x\uFFFDy\""
	}
	const (
		escaped   = `"\u003ca\u0026b\u003e"`
		sorted    = "B,a,b,\uffff,\U0001F600" // byte order, not UTF-16's (RFC 8785)
		unordered = "unordered"
	)
	for _, c := range []struct {
		lib                     string
		html, badUTF8, order, n string
	}{
		{"kube", escaped, stdBad, sorted, "1.0"},
		{"encoding/json", escaped, stdBad, sorted, "1.0"},
		{"go-json-experiment v1", escaped, "\"x\uFFFDy\"", sorted, map[string]string{"json.Number": "1.0", "jsonv1.Number": `"1.0"`}[gjeNumber]},
		{"go-json-experiment v2 defaults", `"<a&b>"`, "error", unordered, map[string]string{"json.Number": "1.0", "jsonv1.Number": `"1.0"`}[gjeNumber]},
		{"go-json-experiment v2 kube options", escaped, "error", sorted, map[string]string{"json.Number": "1.0", "jsonv1.Number": `"1.0"`}[gjeNumber]},
		{"go-json-experiment v2 json.Number", escaped, "error", sorted, "1.0"},
		{"go-json-experiment v2 json.Number, invalid UTF-8 allowed", escaped, "\"x\uFFFDy\"", sorted, "1.0"},
		{"goccy/go-json", escaped, `"x\ufffdy"`, sorted, "1.0"},
		{"bytedance/sonic", escaped, `"x\ufffdy"`, sorted, "1.0"},
	} {
		var enc func(any) ([]byte, error)
		for _, e := range encoders() {
			if e.lib == c.lib {
				enc = e.marshal
			}
		}
		one := func(v any) string {
			b, err := enc(map[string]any{"a": v})
			if err != nil {
				return "error"
			}
			return strings.TrimSuffix(strings.TrimPrefix(string(b), `{"a":`), "}")
		}
		if got := one("<a&b>"); got != c.html {
			t.Errorf("%s, HTML characters: got %s; want %s", c.lib, got, c.html)
		}
		if got := one("x\xffy"); got != c.badUTF8 {
			t.Errorf("%s, invalid UTF-8: got %s; want %s", c.lib, got, c.badUTF8)
		}
		if got := one(json.Number("1.0")); got != c.n {
			t.Errorf("%s, encoding/json.Number(\"1.0\"): got %s; want %s", c.lib, got, c.n)
		}
		if got := keyOrder(t, enc); got != c.order {
			t.Errorf("%s, map key order: got %s; want %s", c.lib, got, c.order)
		}
	}
}

// keyOrder encodes a map 20 times and returns its key order, or
// "unordered" when it varies.
func keyOrder(t *testing.T, enc func(any) ([]byte, error)) string {
	m := map[string]any{"b": 1, "a": 1, "B": 1, "\uffff": 1, "\U0001F600": 1}
	order := ""
	for range 20 {
		b, err := enc(m)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		d := json.NewDecoder(bytes.NewReader(b))
		for {
			tok, err := d.Token()
			if err != nil {
				break
			}
			if s, ok := tok.(string); ok {
				keys = append(keys, s)
			}
		}
		o := strings.Join(keys, ",")
		if order != "" && o != order {
			return "unordered"
		}
		order = o
	}
	return order
}

// TestValidSemantics: kapi's json.Valid checks (patch bodies, apply
// configurations) accept what encoding/json decodes: duplicate names and
// invalid UTF-8, and nothing nested deeper than 10000 (sonic stops at
// 4096).
func TestValidSemantics(t *testing.T) {
	deep := func(n int) []byte { return []byte(strings.Repeat("[", n) + strings.Repeat("]", n)) }
	for _, c := range []struct {
		lib                     string
		dup, badUTF8, deep10000 bool
		deep10001               bool
	}{
		{"encoding/json", true, true, true, false},
		{"go-json-experiment v1", true, true, true, false},
		{"go-json-experiment v2", true, true, true, false},
		{"goccy/go-json", true, true, true, false},
		{"bytedance/sonic", true, true, false, false},
	} {
		valid := Find(c.lib).Valid
		for _, f := range []struct {
			name string
			in   []byte
			want bool
		}{
			{"duplicate key", []byte(`{"a":1,"a":2}`), c.dup},
			{"invalid UTF-8", []byte("{\"a\":\"x\xffy\"}"), c.badUTF8},
			{"depth 10000", deep(10000), c.deep10000},
			{"depth 10001", deep(10001), c.deep10001},
		} {
			if got := valid(f.in); got != f.want {
				t.Errorf("%s, %s: got %v; want %v", c.lib, f.name, got, f.want)
			}
		}
	}
}
