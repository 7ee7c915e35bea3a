package schema

import (
	"reflect"
	"strings"
	"testing"
)

// at walks dotted property names; "[]" steps into items.
func at(s *Schema, path string) *Schema {
	for _, p := range strings.Split(path, ".") {
		if s == nil {
			return nil
		}
		if p == "[]" {
			s = s.Items
			continue
		}
		s = s.Properties[p]
	}
	return s
}

func TestBuiltins(t *testing.T) {
	meta := ObjectMeta()
	ns, cm := Namespace(), ConfigMap()
	tests := []struct {
		name string
		s    *Schema
		path string
		want *Schema
	}{
		{"name", meta, "name", &Schema{Type: "string"}},
		{"generation", meta, "generation", &Schema{Type: "integer", Format: "int64"}},
		{"creationTimestamp", meta, "creationTimestamp", &Schema{Type: "string", Format: "date-time"}},
		{"deletionTimestamp", meta, "deletionTimestamp", &Schema{Type: "string", Format: "date-time"}},
		{"labels", meta, "labels", &Schema{Type: "object", AdditionalProperties: &Schema{Type: "string"}}},
		{"annotations", meta, "annotations", &Schema{Type: "object", AdditionalProperties: &Schema{Type: "string"}}},
		{"finalizers", meta, "finalizers", &Schema{Type: "array", Items: &Schema{Type: "string"}, Ext: Ext{ListType: "set", PatchStrategy: "merge"}}},
		{"fieldsV1", meta, "managedFields.[].fieldsV1", &Schema{Type: "object", Ext: Ext{PreserveUnknownFields: true}}},
		{"namespace phase", ns, "status.phase", &Schema{Type: "string"}},
		{"namespace spec.finalizers", ns, "spec.finalizers", &Schema{Type: "array", Items: &Schema{Type: "string"}, Ext: Ext{ListType: "atomic"}}},
		{"apiVersion", ns, "apiVersion", &Schema{Type: "string"}},
		{"kind", cm, "kind", &Schema{Type: "string"}},
		{"data", cm, "data", &Schema{Type: "object", AdditionalProperties: &Schema{Type: "string"}}},
		{"binaryData", cm, "binaryData", &Schema{Type: "object", AdditionalProperties: &Schema{Type: "string", Format: "byte"}}},
		{"immutable", cm, "immutable", &Schema{Type: "boolean"}},
		{"metadata is ObjectMeta", cm, "metadata", meta},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := at(tt.s, tt.path); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v; want %v", got.JSON(), tt.want.JSON())
			}
		})
	}

	t.Run("ownerReferences", func(t *testing.T) {
		o := meta.Properties["ownerReferences"]
		if o.ListType != "map" || !reflect.DeepEqual(o.ListMapKeys, []string{"uid"}) || o.PatchStrategy != "merge" || o.PatchMergeKey != "uid" {
			t.Errorf("got %+v; want list-type map keyed by uid, patch merge on uid", o.Ext)
		}
		if o.Items.MapType != "atomic" || !reflect.DeepEqual(o.Items.Required, []string{"apiVersion", "kind", "name", "uid"}) {
			t.Errorf("got items %v; want atomic, required apiVersion kind name uid", o.Items.JSON())
		}
	})
	t.Run("managedFields", func(t *testing.T) {
		if got := meta.Properties["managedFields"].ListType; got != "atomic" {
			t.Errorf("got list type %q; want atomic", got)
		}
	})
	t.Run("conditions", func(t *testing.T) {
		c := at(ns, "status.conditions")
		if c.ListType != "map" || !reflect.DeepEqual(c.ListMapKeys, []string{"type"}) || c.PatchStrategy != "merge" || c.PatchMergeKey != "type" {
			t.Errorf("got %+v; want list-type map keyed by type, patch merge on type", c.Ext)
		}
		if got := at(c, "[].lastTransitionTime"); got.Format != "date-time" {
			t.Errorf("got lastTransitionTime %v; want date-time", got.JSON())
		}
	})
	t.Run("fresh copies", func(t *testing.T) {
		ObjectMeta().Properties["name"].Type = "integer"
		if got := ObjectMeta().Properties["name"].Type; got != "string" {
			t.Errorf("got %q after changing another copy; want string", got)
		}
	})
	t.Run("round trip", func(t *testing.T) {
		for _, s := range []*Schema{meta, ns, cm} {
			roundTrip(t, s)
		}
	})
}
