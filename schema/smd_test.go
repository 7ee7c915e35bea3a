package schema_test

import (
	"encoding/json"
	"testing"

	"github.com/kapi-dev/kapi/schema"
)

func TestSMDFieldSets(t *testing.T) {
	tests := []struct {
		name   string
		schema string // "" is no schema
		object string
		want   string // the object's field set, as FieldsV1 JSON
	}{{
		name:   "no schema: maps granular, lists atomic",
		object: `{"metadata":{"finalizers":["a"]},"data":{"a":"1"},"list":[{"x":1}]}`,
		want:   `{"f:data":{".":{},"f:a":{}},"f:list":{},"f:metadata":{".":{},"f:finalizers":{}}}`,
	}, {
		name:   "list map keys",
		schema: `{"type":"object","properties":{"ports":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["port","protocol"],"items":{"type":"object","required":["port","protocol"],"properties":{"port":{"type":"integer"},"protocol":{"type":"string"}}}}}}`,
		object: `{"ports":[{"port":80,"protocol":"TCP"}]}`,
		want:   `{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:port":{},"f:protocol":{}}}}`,
	}, {
		name:   "set and atomic lists",
		schema: `{"type":"object","properties":{"s":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}},"a":{"type":"array","items":{"type":"string"}}}}`,
		object: `{"s":["x"],"a":["y"]}`,
		want:   `{"f:a":{},"f:s":{"v:\"x\"":{}}}`,
	}, {
		name:   "atomic and granular maps",
		schema: `{"type":"object","properties":{"am":{"type":"object","x-kubernetes-map-type":"atomic","additionalProperties":{"type":"string"}},"gm":{"type":"object","additionalProperties":{"type":"string"}}}}`,
		object: `{"am":{"k":"v"},"gm":{"k":"v"}}`,
		want:   `{"f:am":{},"f:gm":{"f:k":{}}}`,
	}, {
		name:   "preserve unknown fields and int-or-string",
		schema: `{"type":"object","properties":{"x":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{"known":{"type":"string"}}},"n":{"x-kubernetes-int-or-string":true}}}`,
		object: `{"x":{"known":"k","other":{"deep":[1]}},"n":"50%"}`,
		want:   `{"f:n":{},"f:x":{"f:known":{},"f:other":{".":{},"f:deep":{}}}}`,
	}, {
		name:   "metadata is ObjectMeta, also in embedded resources",
		schema: `{"type":"object","properties":{"metadata":{"type":"object"},"t":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}}}`,
		object: `{"metadata":{"finalizers":["f"],"ownerReferences":[{"uid":"u","name":"n"}],"labels":{"a":"b"}},"t":{"apiVersion":"v1","metadata":{"finalizers":["g"]}}}`,
		want:   `{"f:metadata":{"f:finalizers":{"v:\"f\"":{}},"f:labels":{"f:a":{}},"f:ownerReferences":{"k:{\"uid\":\"u\"}":{}}},"f:t":{"f:apiVersion":{},"f:metadata":{"f:finalizers":{"v:\"g\"":{}}}}}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s *schema.Schema
			if tt.schema != "" {
				var err error
				if s, err = schema.Parse([]byte(tt.schema)); err != nil {
					t.Fatal(err)
				}
			}
			pt, err := s.SMD()
			if err != nil {
				t.Fatal(err)
			}
			var o any
			if err := json.Unmarshal([]byte(tt.object), &o); err != nil {
				t.Fatal(err)
			}
			tv, err := pt.FromUnstructured(o)
			if err != nil {
				t.Fatal(err)
			}
			set, err := tv.ToFieldSet()
			if err != nil {
				t.Fatal(err)
			}
			got, _ := set.ToJSON()
			if string(got) != tt.want {
				t.Errorf("got %s; want %s", got, tt.want)
			}
		})
	}
}

func TestSMDErrors(t *testing.T) {
	tests := []struct {
		name string
		s    *schema.Schema
	}{
		{"unknown type", &schema.Schema{Type: "date"}},
		{"list map without keys", &schema.Schema{Type: "array", Ext: schema.Ext{ListType: "map"}}},
		{"unknown list type", &schema.Schema{Type: "array", Ext: schema.Ext{ListType: "bag"}}},
		{"unknown map type", &schema.Schema{Type: "object", Ext: schema.Ext{MapType: "loose"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := &schema.Schema{Type: "object", Properties: map[string]*schema.Schema{"x": tt.s}}
			if _, err := root.SMD(); err == nil {
				t.Errorf("got no error; want one")
			}
		})
	}
	// A recursive schema (from a recursive Go type) converts.
	s := &schema.Schema{Type: "object", Properties: map[string]*schema.Schema{}}
	s.Properties["child"] = s
	if _, err := s.SMD(); err != nil {
		t.Errorf("recursive schema: %v", err)
	}
}
