package compare

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The resource every peer stores: widgets.example.com/v1, namespaced.
var (
	WidgetGVK     = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	WidgetListGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "WidgetList"}
	WidgetGVR     = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
)

// Namespaces is how many namespaces the objects are spread over.
const Namespaces = 10

// Shards is the number of values of the "shard" label: a selector on one
// value matches 1% of the objects.
const Shards = 100

// ObjectSize is the approximate encoded size of a widget in bytes.
const ObjectSize = 2048

// filler pads spec.description so that a widget encodes to about
// ObjectSize bytes of JSON.
var filler = strings.Repeat("0123456789abcdef", (ObjectSize-560)/16)

// Name returns the namespace and name of object i.
func Name(i int) (ns, name string) {
	return fmt.Sprintf("ns-%d", i%Namespaces), fmt.Sprintf("w-%06d", i)
}

// Widget returns object i: a ~2 KiB widget with two labels (app, and
// shard = i mod Shards), a UID, and spec fields the scenarios write
// (counter, sentAt).
func Widget(i int) *unstructured.Unstructured {
	ns, name := Name(i)
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata": map[string]any{
			"name":              name,
			"namespace":         ns,
			"uid":               fmt.Sprintf("00000000-0000-4000-8000-%012d", i),
			"creationTimestamp": "2026-01-01T00:00:00Z",
			"labels": map[string]any{
				"app":   "bench",
				"shard": fmt.Sprintf("s%02d", i%Shards),
			},
			"annotations": map[string]any{
				"example.com/owner": "team-" + name,
			},
		},
		"spec": map[string]any{
			"color":       "blue",
			"replicas":    int64(3),
			"counter":     int64(0),
			"sentAt":      int64(0),
			"description": filler,
			"ports": []any{
				map[string]any{"name": "http", "port": int64(80), "protocol": "TCP"},
				map[string]any{"name": "https", "port": int64(443), "protocol": "TCP"},
			},
		},
		"status": map[string]any{"readyReplicas": int64(3)},
	}}
}

// specInt reads spec.<field> as an integer, whichever JSON decoder made
// the object (encoding/json gives float64, apimachinery's gives int64).
func specInt(u *unstructured.Unstructured, field string) int64 {
	spec, _ := u.Object["spec"].(map[string]any)
	switch v := spec[field].(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	case int:
		return int64(v)
	}
	return 0
}

// setSpecInt sets spec.<field>.
func setSpecInt(u *unstructured.Unstructured, field string, v int64) {
	spec, _ := u.Object["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		u.Object["spec"] = spec
	}
	spec[field] = v
}
