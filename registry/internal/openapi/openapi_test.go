package openapi

import (
	"testing"

	"github.com/kapi-dev/kapi/schema"
)

func TestPickV2(t *testing.T) {
	tests := []struct {
		name   string
		accept []string
		want   string
		wantOK bool
	}{
		{"no Accept is JSON", nil, MediaJSON, true},
		{"any", []string{"*/*"}, MediaJSON, true},
		{"client-go's name", []string{MediaProtoDeprecated}, MediaProto, true},
		{"weights", []string{"application/json;q=0.5, " + MediaProto}, MediaProto, true},
		{"specific before wildcard", []string{"*/*, " + MediaProtoDeprecated}, MediaProto, true},
		{"q=0 is refused", []string{MediaProto + ";q=0", "application/json"}, MediaJSON, true},
		{"nothing served", []string{"text/html"}, "", false},
	}
	for _, tt := range tests {
		got, ok := PickV2(tt.accept)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("%s: got %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestToV2(t *testing.T) {
	in := &schema.Schema{Type: "object", Required: []string{"a", "b"}, Properties: map[string]*schema.Schema{
		"a": {Type: "string", Nullable: true},
		"b": {Type: "array"},
		"c": {Type: "object", Ext: schema.Ext{PreserveUnknownFields: true}, Properties: map[string]*schema.Schema{"x": {Type: "string"}}},
		"d": {AnyOf: []*schema.Schema{{Type: "string"}}, Type: "integer"},
	}}
	got := toV2(in)
	if len(got.Required) != 1 || got.Required[0] != "b" {
		t.Errorf("required: got %v; want [b] (a nullable property is not required)", got.Required)
	}
	if p := got.Properties["a"]; p.Type != "" || p.Nullable {
		t.Errorf("nullable a: got type %q nullable %v; want no type", p.Type, p.Nullable)
	}
	if p := got.Properties["b"]; p.Type != "" {
		t.Errorf("array without items: got type %q; want none", p.Type)
	}
	if p := got.Properties["c"]; p.Type != "" || p.Properties != nil {
		t.Errorf("preserved object: got type %q properties %v; want neither", p.Type, p.Properties)
	}
	if p := got.Properties["d"]; p.AnyOf != nil || p.Type != "integer" {
		t.Errorf("anyOf: got %v type %q; want dropped, type kept", p.AnyOf, p.Type)
	}
	if len(in.Required) != 2 || !in.Properties["a"].Nullable {
		t.Errorf("toV2 changed its input")
	}
}

func TestSwaggerPatchTypes(t *testing.T) {
	withSet := &schema.Schema{Type: "object", Properties: map[string]*schema.Schema{
		"tags": {Type: "array", Ext: schema.Ext{ListType: "set"}, Items: &schema.Schema{Type: "string"}},
	}}
	for _, tt := range []struct {
		name    string
		schema  *schema.Schema
		wantSMP bool
	}{
		{"no schema", nil, false},
		{"plain schema", &schema.Schema{Type: "object"}, true},
		{"set list without patch strategy", withSet, false},
	} {
		doc := Swagger("v1", []Resource{{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Schema: tt.schema}})
		patch := doc["paths"].(map[string]any)["/apis/example.com/v1/widgets/{name}"].(map[string]any)["patch"].(map[string]any)
		got := false
		for _, c := range patch["consumes"].([]any) {
			got = got || c == "application/strategic-merge-patch+json"
		}
		if got != tt.wantSMP {
			t.Errorf("%s: strategic merge offered: got %v; want %v", tt.name, got, tt.wantSMP)
		}
	}
}
