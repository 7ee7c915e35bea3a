package gojson

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/kapi-dev/kapi/schema"
)

func decodeNumbers(t testing.TB, s string) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader([]byte(s)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// The converter's messages, as kube-apiserver answers them for a strategic
// merge patch's result (conformance/testdata/diff/patches.yaml compares
// them with kube).
func TestFromUnstructured(t *testing.T) {
	spec := &schema.Schema{Type: "object", Ext: schema.Ext{GoType: "v1.Spec"}, Properties: map[string]*schema.Schema{
		"replicas": {Type: "integer", Format: "int32"},
		"ratio":    {Type: "number", Format: "double"},
		"paused":   {Type: "boolean"},
		"name":     {Type: "string"},
		"data":     {Type: "object", AdditionalProperties: &schema.Schema{Type: "string"}},
		"ports":    {Type: "array", Items: &schema.Schema{Type: "integer", Format: "int32"}},
		"raw":      {Type: "string", Format: "byte"},
	}}
	root := &schema.Schema{Type: "object", Ext: schema.Ext{GoType: "v1.Thing"}, Properties: map[string]*schema.Schema{"spec": spec, "kind": {Type: "string"}}}
	tests := []struct {
		obj, want string
	}{
		{`{"spec":{"replicas":3,"ratio":1,"paused":true,"name":"a","data":{"a":"b"},"ports":[1],"raw":"YQ=="}}`, ""},
		{`{"spec":{"replicas":3.0,"ratio":1.5}}`, ""}, // an integral float64 converts to an int32
		{`{"kind":1}`, ""}, // the root's kind is read before
		{`{"spec":null}`, ""},
		{`{"spec":{"replicas":"x"}}`, "unrecognized type: int32"},
		{`{"spec":{"replicas":1.5}}`, "cannot convert float64 to int32"},
		{`{"spec":{"replicas":true}}`, "unrecognized type: int32"},
		{`{"spec":{"name":1}}`, "cannot convert int64 to string"},
		{`{"spec":{"name":1.5}}`, "unrecognized type: string"},
		{`{"spec":{"name":false}}`, "unrecognized type: string"},
		{`{"spec":{"paused":3}}`, "unrecognized type: bool"},
		{`{"spec":{"ratio":"x"}}`, "unrecognized type: float64"},
		{`{"spec":{"data":{"a":1}}}`, "cannot convert int64 to string"},
		{`{"spec":{"data":[1]}}`, "cannot restore map from slice"},
		{`{"spec":{"ports":"x"}}`, "cannot restore slice from string"},
		{`{"spec":{"ports":[1,"x"]}}`, "unrecognized type: int32"},
		{`{"spec":{"raw":1}}`, "cannot restore slice from int64"},
		{`{"spec":[]}`, "cannot restore struct from: slice"},
		{`{"spec":{"data":1,"name":1}}`, "cannot restore map from int64"}, // fields in name order
	}
	for _, tt := range tests {
		err := FromUnstructured(root, decodeNumbers(t, tt.obj))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s: got %q; want %q", tt.obj, got, tt.want)
		}
	}
}

// Sprint prints as fmt's %+v prints kube's unstructured values (int64,
// float64, sorted map keys).
func TestSprint(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"spec":{"replicas":"x"}}`, "map[spec:map[replicas:x]]"},
		{`{"data":{"b":1,"a":[1,1.5,true,null,"s"]}}`, "map[data:map[a:[1 1.5 true <nil> s] b:1]]"},
		{`{"n":1000000.0,"m":1e-7,"big":12345678901234567890}`, "map[big:1.2345678901234567e+19 m:1e-07 n:1e+06]"},
		{`[]`, "[]"},
		{`{}`, "map[]"},
	}
	for _, tt := range tests {
		if got := Sprint(decodeNumbers(t, tt.in)); got != tt.want {
			t.Errorf("%s: got %q; want %q", tt.in, got, tt.want)
		}
	}
}
