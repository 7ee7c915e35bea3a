package patch_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kapi-dev/kapi/patch"
)

// Server-side apply of a schema-less ConfigMap by two managers: the second
// conflicts on a field the first owns, then forces.
func ExampleFieldManager_Apply() {
	fm, err := patch.NewFieldManager(nil, "v1", patch.FieldManagerOptions{Kind: "ConfigMap"})
	if err != nil {
		panic(err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	live, _ := fm.Apply(nil, map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c"},
		"data":     map[string]any{"a": "1"},
	}, patch.ApplyOptions{Manager: "alice", Now: now})
	b, _ := json.Marshal(live["metadata"])
	fmt.Println(string(b))

	config := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c"},
		"data":     map[string]any{"a": "2"},
	}
	_, err = fm.Apply(live, config, patch.ApplyOptions{Manager: "bob", Now: now})
	var ce *patch.ConflictError
	if errors.As(err, &ce) {
		fmt.Println(err)
		fmt.Println(ce.Conflicts[0].Message(), ce.Conflicts[0].Field)
	}
	live, _ = fm.Apply(live, config, patch.ApplyOptions{Manager: "bob", Force: true, Now: now})
	fmt.Println(live["data"])
	// Output:
	// {"managedFields":[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:a":{}}},"manager":"alice","operation":"Apply","time":"2026-01-02T03:04:05Z"}],"name":"c"}
	// Apply failed with 1 conflict: conflict with "alice": .data.a
	// conflict with "alice" .data.a
	// map[a:2]
}
