package patch_test

import (
	"fmt"

	"github.com/kapi-dev/kapi/patch"
	"github.com/kapi-dev/kapi/schema"
)

// A strategic merge patch merges containers by name, as kubectl patch
// --type strategic does.
func ExampleStrategicMerge() {
	s := &schema.Schema{Type: "object", Properties: map[string]*schema.Schema{
		"spec": {Type: "object", Properties: map[string]*schema.Schema{
			"containers": {Type: "array", Ext: schema.Ext{PatchStrategy: "merge", PatchMergeKey: "name"}},
		}},
	}}
	pod := `{"spec":{"containers":[{"name":"app","image":"app:1"},{"name":"sidecar","image":"proxy:1"}]}}`
	out, err := patch.StrategicMerge([]byte(pod), []byte(`{"spec":{"containers":[{"name":"app","image":"app:2"}]}}`), s, patch.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(out))
	// Output: {"spec":{"containers":[{"image":"app:2","name":"app"},{"image":"proxy:1","name":"sidecar"}]}}
}
