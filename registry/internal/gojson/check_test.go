package gojson

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/kapi-dev/kapi/schema"
)

// decode is how the registry decodes a body: numbers as json.Number.
func decode(t testing.TB, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

// The wants are encoding/json's (and kube's) texts for the same bodies
// decoded into k8s.io/api's ConfigMap and Role.
func TestCheck(t *testing.T) {
	cm, role := schema.ConfigMap(), schema.Role()
	int32s := &schema.Schema{Type: "object", Ext: schema.Ext{GoType: "v1.Spec"}, Properties: map[string]*schema.Schema{
		"replicas": {Type: "integer", Format: "int32"},
		"ratio":    {Type: "number", Format: "double"},
		"when":     {Type: "string", Format: "date-time"},
		"any":      {Type: "object", Ext: schema.Ext{PreserveUnknownFields: true}},
		"anon":     {Type: "object", Properties: map[string]*schema.Schema{"x": {Type: "string"}}},
	}}
	tests := []struct {
		name string
		s    *schema.Schema
		body string
		want string // "" for no error
	}{
		{"valid", cm, `{"metadata":{"name":"a","labels":{"x":"y"}},"data":{"k":"v"},"binaryData":{"b":"aGk="},"immutable":true}`, ""},
		{"nulls fit everything", cm, `{"metadata":null,"data":{"k":null},"immutable":null}`, ""},
		{"unknown fields are not checked", cm, `{"metadata":{"name":"a","nope":1},"extra":[1]}`, ""},
		{"apiVersion and kind are not checked", cm, `{"apiVersion":1,"kind":true}`, ""},
		{"map value", cm, `{"data":{"k":1}}`, "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"},
		{"map itself", cm, `{"data":[1]}`, "json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string"},
		{"bool", cm, `{"immutable":"yes"}`, "json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool"},
		{"bool value is bool", cm, `{"data":{"x":true}}`, "json: cannot unmarshal bool into Go struct field ConfigMap.data of type string"},
		{"struct", cm, `{"metadata":"a"}`, "json: cannot unmarshal string into Go struct field ConfigMap.metadata of type v1.ObjectMeta"},
		{"nested struct field", cm, `{"metadata":{"name":1}}`, "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string"},
		{"nested map", cm, `{"metadata":{"labels":["x"]}}`, "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string"},
		{"nested map value", cm, `{"metadata":{"labels":{"x":1}}}`, "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"},
		{"base64", cm, `{"binaryData":{"k":"%%%"}}`, "illegal base64 data at input byte 0"},
		{"bytes of a number", cm, `{"binaryData":{"k":1}}`, "json: cannot unmarshal number into Go struct field ConfigMap.binaryData of type []uint8"},
		{"first in document order", cm, `{"metadata":{"labels":{"x":1}},"data":[],"immutable":"x"}`, "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string"},
		{"first in document order, reversed", cm, `{"immutable":"x","data":[],"metadata":{"labels":{"x":1}}}`, "json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool"},
		{"list of structs", role, `{"rules":{}}`, "json: cannot unmarshal object into Go struct field Role.rules of type []v1.PolicyRule"},
		{"list in a list item", role, `{"rules":[{"verbs":[1]}]}`, "json: cannot unmarshal number into Go struct field PolicyRule.rules.verbs of type string"},
		{"int32 literal", int32s, `{"replicas":2.0}`, "json: cannot unmarshal number 2.0 into Go struct field Spec.replicas of type int32"},
		{"int32 overflow", int32s, `{"replicas":3000000000}`, "json: cannot unmarshal number 3000000000 into Go struct field Spec.replicas of type int32"},
		{"int32 string", int32s, `{"replicas":"2"}`, "json: cannot unmarshal string into Go struct field Spec.replicas of type int32"},
		{"float overflow", int32s, `{"ratio":1e400}`, "json: cannot unmarshal number 1e400 into Go struct field Spec.ratio of type float64"},
		{"float", int32s, `{"ratio":1.5,"replicas":2}`, ""},
		{"date-time reads itself", int32s, `{"when":5}`, ""},
		{"opaque object", int32s, `{"any":5}`, ""},
		{"struct without a GoType", int32s, `{"anon":{"x":5}}`, ""},
		{"root of a struct", cm, `[]`, "json: cannot unmarshal array into Go value of type v1.ConfigMap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := []byte(tt.body)
			err := Check(tt.s, decode(t, b), func() ([]byte, error) { return b, nil })
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("got %q; want %q", got, tt.want)
			}
		})
	}
}

func TestPositions(t *testing.T) {
	pos := Positions([]byte(`{"metadata":{"name":"a","nope":1},"extra":2,"spec":{"ports":[{"x":1},{"y":2}]},"extra":3}`))
	tests := []struct {
		path string
		want int
	}{
		{"metadata", 0},
		{"metadata.name", 1},
		{"metadata.nope", 2},
		{"spec", 4},
		{"spec.ports", 5},
		{"spec.ports[0].x", 6},
		{"spec.ports[1].y", 7},
		{"extra", 8}, // the duplicate's place
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			if got, ok := pos[tt.path]; !ok || got != tt.want {
				t.Errorf("got %d, %v; want %d", got, ok, tt.want)
			}
		})
	}
	if Positions([]byte(`{`)) != nil {
		t.Error("Positions of a bad body: got a map; want nil")
	}
}
