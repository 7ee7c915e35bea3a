package patch_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/patch"
	"github.com/kapi-dev/kapi/schema"
)

// Field managers built on one *schema.Schema share what was compiled from
// it, and nothing else: each keeps its own apiVersion, kind and reset
// fields, and a schema of equal content but another pointer is compiled
// on its own.
func TestCompiledSchemaShared(t *testing.T) {
	s := schema.Namespace()
	other := schema.Namespace() // equal content, another pointer
	build := func(s *schema.Schema, apiVersion string, opts patch.FieldManagerOptions) *patch.FieldManager {
		m, err := patch.NewFieldManager(s, apiVersion, opts)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	plain := build(s, "v1", patch.FieldManagerOptions{Kind: "Namespace"})
	resets := build(s, "v1", patch.FieldManagerOptions{Kind: "Namespace", ResetFields: map[string][]string{"": {"status"}}})
	v2 := build(s, "v2", patch.FieldManagerOptions{Kind: "Namespace"})
	apart := build(other, "v1", patch.FieldManagerOptions{Kind: "Namespace"})
	if !patch.SameCompiled(plain, resets) || !patch.SameCompiled(plain, v2) {
		t.Fatal("field managers of one schema compiled it more than once")
	}
	if patch.SameCompiled(plain, apart) {
		t.Fatal("field managers of two schemas share a compilation")
	}

	config := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "a"},
		"spec": map[string]any{"finalizers": []any{"kubernetes"}}, "status": map[string]any{"phase": "Active"}}
	tests := []struct {
		name       string
		m          *patch.FieldManager
		wantFields string // the applier's fieldsV1, "" for an error
		wantErr    error
	}{
		{"own reset fields: none", plain, `"f:status":{"f:phase":{}}`, nil},
		{"own reset fields: status", resets, `"f:spec":{"f:finalizers":{}}}`, nil},
		{"own apiVersion", v2, "", patch.ErrBadPatch},
		{"another schema", apart, `"f:status":{"f:phase":{}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := tt.m.Apply(nil, config, patch.ApplyOptions{Manager: "m"})
			if tt.wantErr != nil {
				var pe *patch.Error
				if !errors.As(err, &pe) || pe.Kind != tt.wantErr {
					t.Fatalf("Apply: %v; want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(out["metadata"].(map[string]any)["managedFields"])
			if !strings.Contains(string(b), tt.wantFields) {
				t.Errorf("managedFields %s; want them to hold %s", b, tt.wantFields)
			}
			if tt.m == resets && strings.Contains(string(b), "f:status") {
				t.Errorf("managedFields %s own status, a reset field", b)
			}
		})
	}
}
