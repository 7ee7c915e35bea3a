package patch

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

const widget = `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","labels":{"app":"web"}},"spec":{"color":"red","replicas":1,"ports":[{"port":80},{"port":443}]}}`

// sameJSON compares two JSON documents by value.
func sameJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("result %s is not JSON: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad test expectation %s: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("got %s; want %s", got, want)
	}
}

func checkErr(t *testing.T, err error, kind error, msg string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error = %v; want %v", err, kind)
	}
	var pe *Error
	if !errors.As(err, &pe) || pe.Kind != kind {
		t.Fatalf("error %v is not a *Error of kind %v", err, kind)
	}
	if !strings.Contains(err.Error(), msg) {
		t.Errorf("error message = %q; want it to contain %q", err.Error(), msg)
	}
}

func TestJSONPatch(t *testing.T) {
	tests := []struct {
		name  string
		doc   string
		patch string
		opts  Options
		want  string // result, when err is nil
		err   error
		msg   string
	}{
		{name: "replace", doc: widget, patch: `[{"op":"replace","path":"/spec/color","value":"blue"}]`,
			want: strings.Replace(widget, `"red"`, `"blue"`, 1)},
		{name: "add and remove", doc: `{"a":1,"b":{"c":2}}`, patch: `[{"op":"add","path":"/b/d","value":[1]},{"op":"remove","path":"/a"}]`,
			want: `{"b":{"c":2,"d":[1]}}`},
		{name: "escaped path", doc: `{"metadata":{"labels":{}}}`, patch: `[{"op":"add","path":"/metadata/labels/example.com~1tier","value":"db"}]`,
			want: `{"metadata":{"labels":{"example.com/tier":"db"}}}`},
		{name: "append to list", doc: `{"l":[1,2]}`, patch: `[{"op":"add","path":"/l/-","value":3}]`, want: `{"l":[1,2,3]}`},
		{name: "move and copy", doc: `{"a":{"x":1}}`, patch: `[{"op":"copy","from":"/a","path":"/b"},{"op":"move","from":"/a/x","path":"/c"}]`,
			want: `{"a":{},"b":{"x":1},"c":1}`},
		{name: "test passes", doc: widget, patch: `[{"op":"test","path":"/spec/replicas","value":1},{"op":"replace","path":"/spec/replicas","value":3}]`,
			want: strings.Replace(widget, `"replicas":1`, `"replicas":3`, 1)},
		{name: "empty patch", doc: `{"a":1}`, patch: `[]`, want: `{"a":1}`},
		{name: "null patch", doc: `{"a":1}`, patch: `null`, want: `{"a":1}`},
		{name: "test fails", doc: widget, patch: `[{"op":"test","path":"/spec/color","value":"green"}]`,
			err: ErrApply, msg: "testing value /spec/color failed: test failed"},
		{name: "missing path", doc: widget, patch: `[{"op":"replace","path":"/spec/size","value":1}]`,
			err: ErrApply, msg: "/spec/size"},
		{name: "remove missing", doc: `{}`, patch: `[{"op":"remove","path":"/a/b"}]`, err: ErrApply, msg: "missing"},
		{name: "bad index", doc: `{"l":[]}`, patch: `[{"op":"add","path":"/l/5","value":1}]`, err: ErrApply, msg: "index"},
		{name: "not json", doc: widget, patch: `[{"op":`, err: ErrBadPatch, msg: "invalid JSON patch"},
		{name: "object not list", doc: widget, patch: `{"op":"add","path":"/a","value":1}`, err: ErrBadPatch,
			msg: "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"},
		{name: "path not string", doc: widget, patch: `[{"op":"add","path":1,"value":1}]`, err: ErrBadPatch,
			msg: "error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.path of type string"},
		// As kube's json-patch v4: an unknown op or a missing field fails
		// when applied (422), not when decoded.
		{name: "unknown op", doc: widget, patch: `[{"op":"frobnicate","path":"/a"}]`, err: ErrApply, msg: "unsupported operation"},
		{name: "missing path field", doc: widget, patch: `[{"op":"remove"}]`, err: ErrApply, msg: "path"},
		{name: "empty body", doc: widget, patch: ``, err: ErrBadPatch, msg: "invalid JSON patch"},
		{name: "object not list, field validation ignored", doc: widget, patch: `{"op":"add"}`, opts: Options{IgnoreFieldValidation: true},
			err: ErrBadPatch, msg: "json: cannot unmarshal object into Go value of type jsonpatch.Patch"},
		{name: "op not an object, field validation ignored", doc: widget, patch: `[1]`, opts: Options{IgnoreFieldValidation: true},
			err: ErrBadPatch, msg: "json: cannot unmarshal number into Go value of type jsonpatch.Operation"},
		{name: "path not string, field validation ignored", doc: widget, patch: `[{"op":"add","path":1,"value":1}]`, opts: Options{IgnoreFieldValidation: true},
			err: ErrApply, msg: "path"},
		{name: "replace, field validation ignored", doc: `{"a":1}`, patch: `[{"op":"replace","path":"/a","value":2}]`, opts: Options{IgnoreFieldValidation: true},
			want: `{"a":2}`},
		{name: "too many operations before a bad one", doc: `{"a":1}`, patch: `[{"op":"frobnicate"},{"op":"frobnicate"}]`,
			opts: Options{MaxOperations: 1}, err: ErrTooLarge, msg: "The allowed maximum operations in a JSON patch is 1, got 2"},
		{name: "too many operations", doc: `{"a":1}`, patch: `[` + strings.Repeat(`{"op":"test","path":"/a","value":1},`, 3) + `{"op":"test","path":"/a","value":1}]`,
			opts: Options{MaxOperations: 3}, err: ErrTooLarge, msg: "The allowed maximum operations in a JSON patch is 3, got 4"},
		{name: "unbounded operations", doc: `{"a":1}`, patch: `[` + strings.Repeat(`{"op":"test","path":"/a","value":1},`, 3) + `{"op":"test","path":"/a","value":1}]`,
			opts: Options{MaxOperations: -1}, want: `{"a":1}`},
		{name: "copy limit", doc: `{"a":"` + strings.Repeat("x", 100) + `"}`, patch: `[{"op":"copy","from":"/a","path":"/b"},{"op":"copy","from":"/a","path":"/c"}]`,
			opts: Options{MaxCopyBytes: 150}, err: ErrApply, msg: "exceeding the limit 150"},
		{name: "copy under limit", doc: `{"a":"xx"}`, patch: `[{"op":"copy","from":"/a","path":"/b"}]`, opts: Options{MaxCopyBytes: 150}, want: `{"a":"xx","b":"xx"}`},
		{name: "result not an object", doc: `{"a":1}`, patch: `[{"op":"replace","path":"","value":[1]}]`, err: ErrApply, msg: "not a JSON object"},
		{name: "original not an object", doc: `[1]`, patch: `[]`, err: ErrDocument, msg: "not a valid JSON object"},
		{name: "original invalid", doc: `{"a":`, patch: `[]`, err: ErrDocument, msg: "not a valid JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := JSONPatch([]byte(tt.doc), []byte(tt.patch), tt.opts)
			if tt.err != nil {
				checkErr(t, err, tt.err, tt.msg)
				return
			}
			if err != nil {
				t.Fatalf("JSONPatch error = %v; want nil", err)
			}
			sameJSON(t, got, tt.want)
		})
	}
}

func TestJSONPatchDefaultLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := range DefaultMaxOperations + 1 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"op":"test","path":"/a","value":1}`)
	}
	b.WriteString("]")
	_, err := JSONPatch([]byte(`{"a":1}`), []byte(b.String()), Options{})
	checkErr(t, err, ErrTooLarge, "The allowed maximum operations in a JSON patch is 10000, got 10001")

	// Each copy of a 1 MiB value adds ~1 MiB: the fourth passes 3 MiB.
	doc := `{"a":"` + strings.Repeat("x", 1<<20) + `"}`
	copies := `[{"op":"copy","from":"/a","path":"/b"},{"op":"copy","from":"/a","path":"/c"},{"op":"copy","from":"/a","path":"/d"},{"op":"copy","from":"/a","path":"/e"}]`
	_, err = JSONPatch([]byte(doc), []byte(copies), Options{})
	checkErr(t, err, ErrApply, fmt.Sprintf("exceeding the limit %d", DefaultMaxCopyBytes))
}

func TestMergePatch(t *testing.T) {
	tests := []struct {
		name  string
		doc   string
		patch string
		want  string
		err   error
		msg   string
	}{
		{name: "set field", doc: widget, patch: `{"spec":{"color":"blue"}}`, want: strings.Replace(widget, `"red"`, `"blue"`, 1)},
		{name: "null deletes", doc: `{"a":1,"b":{"c":2,"d":3}}`, patch: `{"a":null,"b":{"c":null}}`, want: `{"b":{"d":3}}`},
		{name: "lists replaced", doc: widget, patch: `{"spec":{"ports":[{"port":8080}]}}`,
			want: strings.Replace(widget, `[{"port":80},{"port":443}]`, `[{"port":8080}]`, 1)},
		{name: "new nested object", doc: `{}`, patch: `{"metadata":{"labels":{"a":"b","gone":null}}}`, want: `{"metadata":{"labels":{"a":"b"}}}`},
		{name: "scalar replaced by object", doc: `{"a":1}`, patch: `{"a":{"b":2}}`, want: `{"a":{"b":2}}`},
		{name: "empty patch", doc: `{"a":1}`, patch: ` {} `, want: `{"a":1}`},
		{name: "invalid json", doc: `{}`, patch: `{"a":`, err: ErrBadPatch, msg: "invalid JSON patch"},
		{name: "list patch", doc: `{}`, patch: `[1]`, err: ErrBadPatch,
			msg: "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"},
		{name: "string patch", doc: `{}`, patch: `"x"`, err: ErrBadPatch, msg: "error decoding patch: json: cannot unmarshal string"},
		{name: "empty body", doc: `{}`, patch: ``, err: ErrBadPatch, msg: "invalid JSON patch"},
		{name: "null patch", doc: `{"a":1}`, patch: `null`, err: ErrBadPatch, msg: "Invalid JSON Patch"},
		{name: "original not an object", doc: `"x"`, patch: `{}`, err: ErrDocument, msg: "not a valid JSON object"},
		{name: "too deep", doc: `{}`, patch: `{"a":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`, err: ErrBadPatch, msg: "invalid JSON patch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MergePatch([]byte(tt.doc), []byte(tt.patch), Options{})
			if tt.err != nil {
				checkErr(t, err, tt.err, tt.msg)
				return
			}
			if err != nil {
				t.Fatalf("MergePatch error = %v; want nil", err)
			}
			sameJSON(t, got, tt.want)
		})
	}
}

// TestPatchedNotAnObject checks that a patch whose result is not an
// object reports the result, which kube quotes.
func TestPatchedNotAnObject(t *testing.T) {
	_, err := JSONPatch([]byte(`{"a":1}`), []byte(`[{"op":"replace","path":"","value":[1]}]`), Options{})
	var pe *Error
	if !errors.As(err, &pe) || pe.Kind != ErrApply || string(pe.Patched) != `[1]` {
		t.Fatalf("error %#v; want ErrApply with Patched [1]", err)
	}
	_, err = JSONPatch([]byte(`{"a":1}`), []byte(`[{"op":"test","path":"/a","value":2}]`), Options{})
	if !errors.As(err, &pe) || pe.Kind != ErrApply || pe.Patched != nil {
		t.Fatalf("error %#v; want ErrApply without Patched", err)
	}
}

func TestJSONPatchTooDeep(t *testing.T) {
	deep := `[{"op":"add","path":"/a","value":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}]`
	_, err := JSONPatch([]byte(`{}`), []byte(deep), Options{})
	checkErr(t, err, ErrBadPatch, "invalid JSON patch")
}

// checkFuzzResult asserts the contract both functions share.
func checkFuzzResult(t *testing.T, out []byte, err error) {
	t.Helper()
	if err != nil {
		var pe *Error
		if !errors.As(err, &pe) {
			t.Fatalf("error %v (%T) is not a *Error", err, err)
		}
		switch pe.Kind {
		case ErrBadPatch, ErrTooLarge, ErrApply, ErrDocument:
		default:
			t.Fatalf("error %v has unknown kind %v", err, pe.Kind)
		}
		return
	}
	var m map[string]any
	if json.Unmarshal(out, &m) != nil || m == nil {
		t.Fatalf("result %q is not a JSON object", out)
	}
}

func FuzzJSONPatch(f *testing.F) {
	seeds := [][2]string{
		{widget, `[{"op":"replace","path":"/spec/color","value":"blue"}]`},
		{`{"a":{"x":1}}`, `[{"op":"copy","from":"/a","path":"/b"},{"op":"move","from":"/a/x","path":"/c"}]`},
		{`{"l":[1,2]}`, `[{"op":"add","path":"/l/-1","value":3},{"op":"remove","path":"/l/0"}]`},
		{`{"a":1}`, `[{"op":"test","path":"/a","value":2}]`},
		{`{"a":1}`, `[{"op":"replace","path":"","value":[1]}]`},
		{`{}`, `[{"op":"add","path":"/a~2b","value":1}]`},
		{`{}`, `{"op":"add"}`},
		{`[1]`, `[]`},
		{`{}`, `null`},
	}
	for _, s := range seeds {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, doc, p []byte) {
		for _, ignore := range []bool{false, true} {
			out, err := JSONPatch(doc, p, Options{MaxOperations: 50, MaxCopyBytes: 1 << 16, IgnoreFieldValidation: ignore})
			checkFuzzResult(t, out, err)
		}
	})
}

func FuzzMergePatch(f *testing.F) {
	seeds := [][2]string{
		{widget, `{"spec":{"color":"blue"}}`},
		{`{"a":1,"b":{"c":2}}`, `{"a":null,"b":{"c":null,"d":[null]}}`},
		{`{}`, `[1]`},
		{`{}`, `null`},
		{`{}`, `{"a":`},
		{`"x"`, `{}`},
	}
	for _, s := range seeds {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, doc, p []byte) {
		out, err := MergePatch(doc, p, Options{})
		checkFuzzResult(t, out, err)
	})
}
