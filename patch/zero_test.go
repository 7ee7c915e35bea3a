package patch_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/patch"
	"github.com/kapi-dev/kapi/schema"
)

// A create's managedFields with FieldManagerOptions.Zero: the structs the
// zero value has are not owned themselves, only what is set in them.
func TestUpdateCreateFromZero(t *testing.T) {
	sc := schema.Namespace()
	tests := []struct {
		name string
		zero map[string]any
		want string
	}{
		{"no zero (a custom resource's)", nil, `{"f:spec":{".":{},"f:finalizers":{}}}`},
		{"a typed kind's empty spec", map[string]any{"spec": map[string]any{}, "status": map[string]any{}}, `{"f:spec":{"f:finalizers":{}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm, err := patch.NewFieldManager(sc, "v1", patch.FieldManagerOptions{Kind: "Namespace", Zero: tt.zero})
			if err != nil {
				t.Fatal(err)
			}
			obj := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "a"},
				"spec": map[string]any{"finalizers": []any{"example.com/f"}}}
			out, err := fm.Update(nil, obj, patch.UpdateOptions{Manager: "m", Now: time.Unix(0, 0)})
			if err != nil {
				t.Fatal(err)
			}
			mf := out["metadata"].(map[string]any)["managedFields"].([]any)
			got, _ := json.Marshal(mf[0].(map[string]any)["fieldsV1"])
			if string(got) != tt.want {
				t.Errorf("fieldsV1 %s; want %s", got, tt.want)
			}
			if spec, _ := tt.zero["spec"].(map[string]any); len(spec) != 0 {
				t.Errorf("zero changed: %v", tt.zero)
			}
		})
	}
}
