package conformance

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
)

// widgetState is what the subresource tests check after each step.
type widgetState struct {
	color         string
	replicas      int64
	readyReplicas int64 // 0: unset
	generation    int64
}

// checkWidget compares u with want.
func checkWidget(t *testing.T, step string, u *unstructured.Unstructured, want widgetState) {
	t.Helper()
	if got := nestedString(t, u, "spec", "color"); got != want.color {
		t.Errorf("%s: spec.color: got %q; want %q", step, got, want.color)
	}
	if got, _ := nestedInt(t, u, "spec", "replicas"); got != want.replicas {
		t.Errorf("%s: spec.replicas: got %d; want %d", step, got, want.replicas)
	}
	if got, _ := nestedInt(t, u, "status", "readyReplicas"); got != want.readyReplicas {
		t.Errorf("%s: status.readyReplicas: got %d; want %d", step, got, want.readyReplicas)
	}
	if got := u.GetGeneration(); got != want.generation {
		t.Errorf("%s: generation: got %d; want %d", step, got, want.generation)
	}
}

// META-3: the spec/status split of a resource with a status subresource.
func TestStatusSubresource(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	c := e.widgets("default")

	w := widget("default", "s", "red", 1, nil)
	_ = unstructured.SetNestedField(w.Object, int64(7), "status", "readyReplicas")
	cur, err := c.Create(ctx, w, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	checkWidget(t, "create ignores status", cur, widgetState{color: "red", replicas: 1, generation: 1})
	createdRV := cur.GetResourceVersion()

	steps := []struct {
		name string
		do   func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error)
		want widgetState
	}{
		{
			name: "UpdateStatus changes status only",
			do: func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
				u := cur.DeepCopy()
				_ = unstructured.SetNestedField(u.Object, int64(2), "status", "readyReplicas")
				_ = unstructured.SetNestedField(u.Object, "blue", "spec", "color")
				return c.UpdateStatus(ctx, u, metav1.UpdateOptions{})
			},
			want: widgetState{color: "red", replicas: 1, readyReplicas: 2, generation: 1},
		},
		{
			name: "Update ignores status",
			do: func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
				u := cur.DeepCopy()
				_ = unstructured.SetNestedField(u.Object, int64(9), "status", "readyReplicas")
				_ = unstructured.SetNestedField(u.Object, "green", "spec", "color")
				return c.Update(ctx, u, metav1.UpdateOptions{})
			},
			want: widgetState{color: "green", replicas: 1, readyReplicas: 2, generation: 2},
		},
		{
			name: "merge patch on status",
			do: func(*unstructured.Unstructured) (*unstructured.Unstructured, error) {
				return c.Patch(ctx, "s", types.MergePatchType, []byte(`{"spec":{"replicas":3},"status":{"readyReplicas":4}}`), metav1.PatchOptions{}, "status")
			},
			want: widgetState{color: "green", replicas: 1, readyReplicas: 4, generation: 2},
		},
		{
			name: "merge patch on main resource ignores status",
			do: func(*unstructured.Unstructured) (*unstructured.Unstructured, error) {
				return c.Patch(ctx, "s", types.MergePatchType, []byte(`{"spec":{"replicas":3},"status":{"readyReplicas":8}}`), metav1.PatchOptions{})
			},
			want: widgetState{color: "green", replicas: 3, readyReplicas: 4, generation: 3},
		},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			got, err := st.do(cur)
			if err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			checkWidget(t, "response", got, st.want)
			stored, err := c.Get(ctx, "s", metav1.GetOptions{})
			if err != nil {
				t.Fatalf("get: %v", err)
			}
			checkWidget(t, "stored", stored, st.want)
			cur = stored
		})
	}

	t.Run("conditions round-trip", func(t *testing.T) {
		u := cur.DeepCopy()
		conds := []any{map[string]any{"type": "Ready", "status": "True", "reason": "AllGood", "lastTransitionTime": "2024-01-02T03:04:05Z"}}
		_ = unstructured.SetNestedSlice(u.Object, conds, "status", "conditions")
		got, err := c.UpdateStatus(ctx, u, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("UpdateStatus: %v", err)
		}
		gotConds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		if len(gotConds) != 1 || gotConds[0].(map[string]any)["reason"] != "AllGood" {
			t.Errorf("status.conditions: got %v; want %v", gotConds, conds)
		}
	})

	t.Run("stale resourceVersion", func(t *testing.T) {
		stale := cur.DeepCopy()
		stale.SetResourceVersion(createdRV)
		if _, err := c.UpdateStatus(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
			t.Errorf("UpdateStatus with a stale resourceVersion %s: got %v; want Conflict", createdRV, err)
		}
	})
}

// META-4: /scale as an autoscaling/v1 Scale, through the dynamic client
// and through client-go's scale client (what kubectl scale uses).
func TestScaleSubresource(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	c := e.widgets("default")
	e.create(t, widgetsGVR, widget("default", "sc", "red", 2, nil))
	w, err := c.Patch(ctx, "sc", types.MergePatchType, []byte(`{"status":{"readyReplicas":1}}`), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatalf("patch status: %v", err)
	}

	t.Run("dynamic get", func(t *testing.T) {
		s, err := c.Get(ctx, "sc", metav1.GetOptions{}, "scale")
		if err != nil {
			t.Fatalf("get scale: %v", err)
		}
		if s.GetAPIVersion() != "autoscaling/v1" || s.GetKind() != "Scale" {
			t.Errorf("scale type: got %s %s; want autoscaling/v1 Scale", s.GetAPIVersion(), s.GetKind())
		}
		if s.GetName() != "sc" || s.GetNamespace() != "default" || s.GetUID() != w.GetUID() || s.GetResourceVersion() != w.GetResourceVersion() {
			t.Errorf("scale metadata: got %s/%s uid %s rv %s; want default/sc uid %s rv %s", s.GetNamespace(), s.GetName(), s.GetUID(), s.GetResourceVersion(), w.GetUID(), w.GetResourceVersion())
		}
		if got, _ := nestedInt(t, s, "spec", "replicas"); got != 2 {
			t.Errorf("scale spec.replicas: got %d; want 2", got)
		}
		if got, _ := nestedInt(t, s, "status", "replicas"); got != 1 {
			t.Errorf("scale status.replicas: got %d; want 1 (status.readyReplicas)", got)
		}
	})

	t.Run("dynamic update", func(t *testing.T) {
		s, err := c.Get(ctx, "sc", metav1.GetOptions{}, "scale")
		if err != nil {
			t.Fatalf("get scale: %v", err)
		}
		_ = unstructured.SetNestedField(s.Object, int64(5), "spec", "replicas")
		got, err := c.Update(ctx, s, metav1.UpdateOptions{}, "scale")
		if err != nil {
			t.Fatalf("update scale: %v", err)
		}
		if r, _ := nestedInt(t, got, "spec", "replicas"); r != 5 || got.GetKind() != "Scale" {
			t.Errorf("update scale response: got %s spec.replicas %d; want Scale 5", got.GetKind(), r)
		}
		stored, err := c.Get(ctx, "sc", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		checkWidget(t, "after scale update", stored, widgetState{color: "red", replicas: 5, readyReplicas: 1, generation: 2})

		// s now carries a stale resourceVersion.
		_ = unstructured.SetNestedField(s.Object, int64(6), "spec", "replicas")
		if _, err := c.Update(ctx, s, metav1.UpdateOptions{}, "scale"); !apierrors.IsConflict(err) {
			t.Errorf("update scale with a stale resourceVersion: got %v; want Conflict", err)
		}
	})

	t.Run("scale client", func(t *testing.T) {
		dc, err := discovery.NewDiscoveryClientForConfig(e.config())
		if err != nil {
			t.Fatalf("discovery: %v", err)
		}
		cached := memory.NewMemCacheClient(dc)
		sc, err := scale.NewForConfig(e.config(), restmapper.NewDeferredDiscoveryRESTMapper(cached), dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(cached))
		if err != nil {
			t.Fatalf("scale.NewForConfig: %v", err)
		}
		gr := schema.GroupResource{Group: "example.com", Resource: "widgets"}
		s, err := sc.Scales("default").Get(ctx, gr, "sc", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("scale client get: %v", err)
		}
		if s.Spec.Replicas != 5 || s.Status.Replicas != 1 {
			t.Errorf("scale client get: got spec.replicas %d status.replicas %d; want 5 and 1", s.Spec.Replicas, s.Status.Replicas)
		}
		s.Spec.Replicas = 4
		if _, err := sc.Scales("default").Update(ctx, gr, s, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("scale client update: %v", err)
		}
		patched, err := sc.Scales("default").Patch(ctx, widgetsGVR, "sc", types.MergePatchType, []byte(`{"spec":{"replicas":3}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("scale client patch: %v", err)
		}
		if patched.Spec.Replicas != 3 {
			t.Errorf("scale client patch response: got spec.replicas %d; want 3", patched.Spec.Replicas)
		}
		stored, err := c.Get(ctx, "sc", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		checkWidget(t, "after scale client", stored, widgetState{color: "red", replicas: 3, readyReplicas: 1, generation: 4})
	})
}
