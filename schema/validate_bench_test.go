package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// widgetSchema is a widget-like custom resource: a spec of nested
// objects, list-maps, patterned strings and bounded integers.
const widgetSchema = `{
  "type": "object",
  "properties": {
    "spec": {
      "type": "object",
      "required": ["replicas", "selector"],
      "properties": {
        "replicas": {"type": "integer", "minimum": 0, "maximum": 1000, "default": 1},
        "paused": {"type": "boolean"},
        "selector": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 63, "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"}},
        "image": {"type": "string", "pattern": "^[a-z0-9./-]+(:[a-z0-9.-]+)?$", "maxLength": 256},
        "strategy": {"type": "string", "enum": ["Recreate", "RollingUpdate"], "default": "RollingUpdate"},
        "resources": {"type": "object", "properties": {
          "cpu": {"x-kubernetes-int-or-string": true},
          "memory": {"type": "string", "pattern": "^[0-9]+(Ki|Mi|Gi)?$"}}},
        "ports": {
          "type": "array", "maxItems": 10000,
          "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port", "protocol"],
          "items": {"type": "object", "required": ["port"], "properties": {
            "name": {"type": "string", "maxLength": 15, "pattern": "^[a-z]([-a-z0-9]*[a-z0-9])?$"},
            "port": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 65535},
            "protocol": {"type": "string", "enum": ["TCP", "UDP", "SCTP"], "default": "TCP"},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}}}},
        "env": {
          "type": "array",
          "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
          "items": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "pattern": "^[A-Z_][A-Z0-9_]*$"},
            "value": {"type": "string", "maxLength": 4096}}}}
      }
    },
    "status": {"type": "object", "properties": {
      "readyReplicas": {"type": "integer", "minimum": 0},
      "conditions": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"],
        "items": {"type": "object", "required": ["type", "status"], "properties": {
          "type": {"type": "string"}, "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
          "message": {"type": "string", "maxLength": 32768}}}}}}
  }
}`

// widgetJSON is a valid widget of about size bytes: ports and env grow
// with it.
func widgetJSON(size int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"default"},` +
		`"spec":{"replicas":3,"selector":{"app":"widget","tier":"backend"},"image":"registry.example.com/widget:1.2.3",` +
		`"resources":{"cpu":2,"memory":"512Mi"},"ports":[`)
	n := 0
	for b.Len() < size/2 {
		if n > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"p%d","port":%d,"protocol":"TCP","tags":["a","b"]}`, n, 1+n%65535)
		n++
	}
	b.WriteString(`],"env":[`)
	for i := 0; b.Len() < size-200; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"VAR_%d","value":"value-%d"}`, i, i)
	}
	b.WriteString(`]},"status":{"readyReplicas":3,"conditions":[{"type":"Ready","status":"True","message":"ok"}]}}`)
	return b.Bytes()
}

func benchValidate(b *testing.B, size int) {
	s, err := Parse([]byte(widgetSchema))
	if err != nil {
		b.Fatal(err)
	}
	raw := widgetJSON(size)
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var obj any
	if err := d.Decode(&obj); err != nil {
		b.Fatal(err)
	}
	if errs := s.Validate(obj); len(errs) > 0 {
		b.Fatalf("widget invalid: %v", errs)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		s.Validate(obj)
	}
}

func BenchmarkValidate(b *testing.B) {
	b.Run("2KiB", func(b *testing.B) { benchValidate(b, 2<<10) })
	b.Run("100KiB", func(b *testing.B) { benchValidate(b, 100<<10) })
}
