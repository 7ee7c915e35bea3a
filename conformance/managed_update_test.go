package conformance

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Issue 10: the field manager's create and update paths (fieldsV1 written
// straight from a created object, live and new compared on their JSON
// form) as real clients see them in their default configurations: the
// typed clientset (protobuf, configmaps) and the dynamic client (JSON, a
// widget with an associative list).
func TestUpdateManagedFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)

	t.Run("typed clientset, protobuf", func(t *testing.T) {
		cms := newClientset(t, e).CoreV1().ConfigMaps("default")
		cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "managed"}, Data: map[string]string{"a": "1", "b": "2"}},
			metav1.CreateOptions{FieldManager: "m1"})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		for _, key := range []string{"a", "b"} {
			if got := owners(t, cm.ManagedFields, "data", key); !slices.Equal(got, []string{"m1/Update"}) {
				t.Errorf("after create, owners of data.%s: got %v; want [m1/Update]%s", key, got, managedFieldsString(cm.ManagedFields))
			}
		}
		cm.Data["a"] = "changed"
		cm.Data["c"] = "3"
		cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "m2"})
		if err != nil {
			t.Fatalf("update: %v", err)
		}
		for key, want := range map[string][]string{"a": {"m2/Update"}, "b": {"m1/Update"}, "c": {"m2/Update"}} {
			if got := owners(t, cm.ManagedFields, "data", key); !slices.Equal(got, want) {
				t.Errorf("after m2's update, owners of data.%s: got %v; want %v%s", key, got, want, managedFieldsString(cm.ManagedFields))
			}
		}
		// An update that changes nothing leaves the entries as they are.
		before := managedFieldsString(cm.ManagedFields)
		cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "m3"})
		if err != nil {
			t.Fatalf("no-op update: %v", err)
		}
		if got := managedFieldsString(cm.ManagedFields); got != before {
			t.Errorf("after a no-op update by m3: got%s; want%s", got, before)
		}
	})

	t.Run("dynamic client, JSON, associative list", func(t *testing.T) {
		ws := e.dyn.Resource(widgetsGVR).Namespace("default")
		w, err := ws.Create(ctx, widget("default", "managed", "red", 1, nil), metav1.CreateOptions{FieldManager: "m1"})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		port80 := fieldpath.KeyByFields("port", 80, "protocol", "TCP")
		for _, path := range [][]any{{"spec", "color"}, {"spec", "ports", port80, "name"}} {
			if got := owners(t, w.GetManagedFields(), path...); !slices.Equal(got, []string{"m1/Update"}) {
				t.Errorf("after create, owners of %v: got %v; want [m1/Update]%s", path, got, managedFieldsString(w.GetManagedFields()))
			}
		}
		ports, _, _ := unstructured.NestedSlice(w.Object, "spec", "ports")
		ports = append(ports, map[string]any{"name": "https", "port": int64(443), "protocol": "TCP"})
		if err := unstructured.SetNestedSlice(w.Object, ports, "spec", "ports"); err != nil {
			t.Fatal(err)
		}
		w, err = ws.Update(ctx, w, metav1.UpdateOptions{FieldManager: "m2"})
		if err != nil {
			t.Fatalf("update: %v", err)
		}
		port443 := fieldpath.KeyByFields("port", 443, "protocol", "TCP")
		for _, c := range []struct {
			path []any
			want []string
		}{
			{[]any{"spec", "color"}, []string{"m1/Update"}},
			{[]any{"spec", "ports", port80, "name"}, []string{"m1/Update"}},
			{[]any{"spec", "ports", port443, "name"}, []string{"m2/Update"}},
		} {
			if got := owners(t, w.GetManagedFields(), c.path...); !slices.Equal(got, c.want) {
				t.Errorf("after m2's update, owners of %v: got %v; want %v%s", c.path, got, c.want, managedFieldsString(w.GetManagedFields()))
			}
		}
	})
}
