package jsoncmp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/bytedance/sonic"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	gojson "github.com/goccy/go-json"
	kjson "sigs.k8s.io/json"
)

// Lib is one JSON library as kapi would call it. A nil function is an
// operation the library does not offer in that form.
type Lib struct {
	Name string
	// Exact reports whether Unmarshal keeps every number exactly (as a
	// Number string, or int64 for integers); false: float64.
	Exact bool
	// Unmarshal decodes one JSON object into map[string]any.
	Unmarshal func([]byte) (any, error)
	// Number is how the library's maps carry a number for Marshal
	// (json.Number for most; go-json-experiment's own Number type).
	Number func(string) any
	// Marshal encodes a map from Unmarshal (numbers made by Number).
	Marshal func(any) ([]byte, error)
	// Valid reports whether a body is one JSON value.
	Valid func([]byte) bool
}

// kube's encode options for the v2 API: maps sorted, <>& escaped (what
// encoding/json, and so kube-apiserver, writes).
var v2Kube = jsonv2.JoinOptions(jsonv2.Deterministic(true), jsontext.EscapeForHTML(true))

// v2KubeStd adds, for maps that hold encoding/json.Number (kapi's), a
// marshaler writing it as the number it is: the go-json-experiment module
// does not know the standard library's Number unless GOEXPERIMENT=jsonv2
// makes it an alias of encoding/json/v2, and writes it as a string.
var v2KubeStd = jsonv2.JoinOptions(v2Kube, jsonv2.WithMarshalers(jsonv2.MarshalToFunc(
	func(enc *jsontext.Encoder, n json.Number) error { return enc.WriteValue(jsontext.Value(n)) })))

// sonicStd is sonic's encoding/json-compatible config with numbers kept.
var sonicStd = func() sonic.API {
	c := sonic.Config{EscapeHTML: true, SortMapKeys: true, CompactMarshaler: true, CopyString: true, ValidateString: true, UseNumber: true}
	return c.Froze()
}()

func stdNumber(s string) any { return json.Number(s) }

// Libs are the candidates, encoding/json first (kapi today).
var Libs = []Lib{
	{
		Name: "encoding/json", Exact: true,
		Unmarshal: func(b []byte) (any, error) {
			d := json.NewDecoder(bytes.NewReader(b))
			d.UseNumber()
			var v any
			err := d.Decode(&v)
			return v, err
		},
		Number:  stdNumber,
		Marshal: json.Marshal,
		Valid:   json.Valid,
	},
	{
		Name: "encoding/json float64",
		Unmarshal: func(b []byte) (any, error) {
			var v any
			err := json.Unmarshal(b, &v)
			return v, err
		},
	},
	{
		Name: "sigs.k8s.io/json", Exact: true,
		Unmarshal: func(b []byte) (any, error) {
			var v any
			err := kjson.UnmarshalCaseSensitivePreserveInts(b, &v)
			return v, err
		},
	},
	{
		Name: "go-json-experiment v1", Exact: true,
		Unmarshal: func(b []byte) (any, error) {
			d := jsonv1.NewDecoder(bytes.NewReader(b))
			d.UseNumber()
			var v any
			err := d.Decode(&v)
			return v, err
		},
		Number:  func(s string) any { return jsonv1.Number(s) },
		Marshal: jsonv1.Marshal,
		Valid:   jsonv1.Valid,
	},
	{
		Name: "go-json-experiment v2",
		Unmarshal: func(b []byte) (any, error) {
			var v any
			err := jsonv2.Unmarshal(b, &v)
			return v, err
		},
		Number:  func(s string) any { return jsonv1.Number(s) },
		Marshal: func(v any) ([]byte, error) { return jsonv2.Marshal(v, v2Kube) },
		Valid: func(b []byte) bool {
			return jsontext.Value(b).IsValid(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
		},
	},
	{
		Name:    "go-json-experiment v2 json.Number",
		Number:  stdNumber,
		Marshal: func(v any) ([]byte, error) { return jsonv2.Marshal(v, v2KubeStd) },
	},
	{
		Name: "jsontext tree", Exact: true,
		Unmarshal: func(b []byte) (any, error) {
			v, _, err := DecodeTree(b)
			return v, err
		},
	},
	{
		Name: "goccy/go-json", Exact: true,
		Unmarshal: func(b []byte) (any, error) {
			d := gojson.NewDecoder(bytes.NewReader(b))
			d.UseNumber()
			var v any
			err := d.Decode(&v)
			return v, err
		},
		Number:  stdNumber,
		Marshal: gojson.Marshal,
		Valid:   gojson.Valid,
	},
	{
		Name: "bytedance/sonic", Exact: true,
		Unmarshal: func(b []byte) (any, error) {
			var v any
			err := sonicStd.Unmarshal(b, &v)
			return v, err
		},
		Number:  stdNumber,
		Marshal: sonicStd.Marshal,
		Valid:   sonic.Valid,
	},
}

// Find returns the candidate named name.
func Find(name string) Lib {
	for _, l := range Libs {
		if l.Name == name {
			return l
		}
	}
	panic("jsoncmp: no library " + name)
}

// Renumber copies a decoded value, turning every number (json.Number,
// go-json-experiment's Number, int64 or float64) into number(its text).
func Renumber(v any, number func(string) any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = Renumber(x, number)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, x := range v {
			l[i] = Renumber(x, number)
		}
		return l
	case nil, bool, string:
		return v
	case fmt.Stringer: // json.Number and go-json-experiment's Number
		return number(v.String())
	case int64:
		return number(strconv.FormatInt(v, 10))
	case float64:
		return number(strconv.FormatFloat(v, 'g', -1, 64))
	}
	panic(fmt.Sprintf("jsoncmp: unexpected %T", v))
}
