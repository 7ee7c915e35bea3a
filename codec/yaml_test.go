package codec_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/codec"
)

func TestYAMLToJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
		err            bool
	}{
		{name: "object", in: "a: 1\nb: [x, z]\n", want: `{"a":1,"b":["x","z"]}`},
		{name: "yaml 1.1 booleans, as kube reads them", in: "name: y\n", want: `{"name":true}`},
		{name: "aliases within bounds", in: "a: &x [1]\nb: *x\n", want: `{"a":[1],"b":[1]}`},
		{name: "syntax error", in: "a: [b\n", err: true},
		{name: "duplicate key: the last wins, as in kube without strict field validation", in: "a: 1\na: 2\n", want: `{"a":2}`},
		{name: "flow nesting past MaxDepth", in: strings.Repeat("[", codec.MaxDepth+1), err: true},
		{name: "alias bomb", in: bomb, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := codec.YAMLToJSON([]byte(tt.in))
			if tt.err {
				if !errors.Is(err, codec.ErrInvalidYAML) {
					t.Fatalf("got %s, %v; want an ErrInvalidYAML", got, err)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Errorf("got %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func TestJSONToYAML(t *testing.T) {
	got, err := codec.JSONToYAML([]byte(`{"kind":"ConfigMap","apiVersion":"v1","data":{"a":"b"}}`))
	if want := "apiVersion: v1\ndata:\n  a: b\nkind: ConfigMap\n"; err != nil || string(got) != want {
		t.Errorf("got %q, %v; want %q (keys sorted, as kube writes YAML)", got, err, want)
	}
}

var bomb = `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
`

// FuzzYAMLToJSON: any input converts or fails with ErrInvalidYAML, never
// panics, and what converts is valid JSON.
func FuzzYAMLToJSON(f *testing.F) {
	for _, s := range []string{"a: 1\n", "- x\n- y\n", "a: &x [1]\nb: *x\n", bomb, "{[", "a: !!binary AAE=\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		j, err := codec.YAMLToJSON(b)
		if err != nil {
			if !errors.Is(err, codec.ErrInvalidYAML) {
				t.Fatalf("error %v does not wrap ErrInvalidYAML", err)
			}
			return
		}
		if !json.Valid(j) {
			t.Fatalf("YAMLToJSON(%q) = %q: not JSON", b, j)
		}
	})
}

func TestYAMLDuplicateKeys(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"a: 1\nb: 2\n", nil},
		{"a: 1\na: 2\n", []string{`line 2: key "a" already set in map`}},
		{"spec:\n  size: 1\n  size: 2\n  x: {z: 1, z: 2}\n", []string{`line 3: key "size" already set in map`, `line 4: key "z" already set in map`}},
		{"a: [1\n", nil},
	} {
		if got := codec.YAMLDuplicateKeys([]byte(tc.in)); !slices.Equal(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
}
