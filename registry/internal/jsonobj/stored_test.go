package jsonobj

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

func TestStoredForm(t *testing.T) {
	tests := []struct {
		name, in, stored, at7 string
		untyped               string // AppendUntypedRV's answer
	}{
		{"order and no resourceVersion",
			`{"spec":{"b":1,"a":2},"metadata":{"resourceVersion":"3","name":"a"},"kind":"ConfigMap","apiVersion":"v1","data":{}}`,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{},"spec":{"a":2,"b":1}}`,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"resourceVersion":"7","name":"a"},"data":{},"spec":{"a":2,"b":1}}`,
			`{"metadata":{"resourceVersion":"7","name":"a"},"data":{},"spec":{"a":2,"b":1}}`},
		{"empty metadata",
			`{"kind":"X"}`,
			`{"kind":"X","metadata":{}}`,
			`{"kind":"X","metadata":{"resourceVersion":"7"}}`,
			`{"metadata":{"resourceVersion":"7"}}`},
	}
	for _, tt := range tests {
		obj, _, err := Decode([]byte(tt.in), false)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		rvBefore := metadata(obj)["resourceVersion"]
		b, err := Encode(obj)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if string(b) != tt.stored {
			t.Errorf("%s: Encode: got %s; want %s", tt.name, b, tt.stored)
		}
		if got := metadata(obj)["resourceVersion"]; got != rvBefore {
			t.Errorf("%s: Encode changed the object's resourceVersion: got %v; want %v", tt.name, got, rvBefore)
		}
		if got := WithRV(b, 7); string(got) != tt.at7 {
			t.Errorf("%s: WithRV: got %s; want %s", tt.name, got, tt.at7)
		}
		if got := AppendRV([]byte("x"), b, 7); string(got) != "x"+tt.at7 {
			t.Errorf("%s: AppendRV: got %s; want x%s", tt.name, got, tt.at7)
		}
		if got := AppendUntypedRV([]byte("x"), b, 7); string(got) != "x"+tt.untyped {
			t.Errorf("%s: AppendUntypedRV: got %s; want x%s", tt.name, got, tt.untyped)
		}
		got, err := DecodeStored(b, 7)
		var want map[string]any
		json.Unmarshal([]byte(tt.at7), &want)
		if err != nil || !reflect.DeepEqual(jsonOf(got), jsonOf(want)) {
			t.Errorf("%s: DecodeStored: got %v, %v; want %v", tt.name, got, err, want)
		}
	}
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestDuplicates(t *testing.T) {
	body := []byte(`{"a":1,"spec":{"ports":[{"port":1,"port":2}],"x":1,"x":2},"a":3}`)
	var v any
	json.Unmarshal(body, &v)
	got := Duplicates(body, v)
	want := []string{`duplicate field "spec.ports[0].port"`, `duplicate field "spec.x"`, `duplicate field "a"`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q; want %q", got, want)
	}
	if got := Duplicates([]byte(`{"a":{"b":1}}`), map[string]any{"a": map[string]any{"b": 1}}); got != nil {
		t.Errorf("no duplicates: got %q; want none", got)
	}
}

func TestMayHaveReplaced(t *testing.T) {
	for _, tt := range []struct {
		name string
		v    any
		want bool
	}{
		{"valid strings", map[string]any{"a": "é\ufffd", "b": int64(1), "c": nil, "d": []any{"x"}, "e": []string{"y"}}, false},
		{"an invalid string", map[string]any{"a": "\xff"}, true},
		{"an invalid key", map[string]any{"\xffa": "x"}, true},
		{"in a list", map[string]any{"a": []any{"ok", map[string]any{"b": "\xc3"}}}, true},
		{"in a []string", map[string]any{"a": []string{"ok", "\xfe"}}, true},
		{"in a map[string]string", map[string]any{"a": map[string]string{"k": "\xfe"}}, true},
		{"a backslash and ufffd (a false positive)", map[string]any{"a": `\ufffd`}, true},
	} {
		b, err := Encode(map[string]any{"metadata": map[string]any{}, "v": tt.v})
		if err != nil {
			t.Fatal(err)
		}
		if got := MayHaveReplaced(b); got != tt.want {
			t.Errorf("%s: %s: got %v; want %v", tt.name, b, got, tt.want)
		}
		// Without the escape, the strings read back as they were.
		back, err := DecodeStored(b, 1)
		if err != nil {
			t.Fatal(err)
		}
		if !tt.want && fmt.Sprint(back["v"]) != fmt.Sprint(tt.v) {
			t.Errorf("%s: read back as %v", tt.name, back["v"])
		}
	}
}
