package conformance

import (
	"context"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

const holdFinalizer = "example.com/hold"

// DEL-1, META-2: delete with a finalizer marks the object; removing the
// last finalizer removes it; no finalizer may be added meanwhile.
func TestFinalizers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	c := e.widgets("default")
	w := widget("default", "fin", "red", 1, nil)
	w.SetFinalizers([]string{holdFinalizer})
	created := e.create(t, widgetsGVR, w)

	wt, err := c.Watch(ctx, metav1.ListOptions{ResourceVersion: created.GetResourceVersion(), FieldSelector: "metadata.name=fin"})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer wt.Stop()

	if err := c.Delete(ctx, "fin", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	marked, err := c.Get(ctx, "fin", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get after delete with a finalizer: %v; want the object, still present", err)
	}
	t.Run("marked for deletion", func(t *testing.T) {
		if marked.GetDeletionTimestamp() == nil {
			t.Errorf("deletionTimestamp: got unset; want set")
		}
		if got := marked.GetFinalizers(); !slices.Equal(got, []string{holdFinalizer}) {
			t.Errorf("finalizers: got %v; want [%s]", got, holdFinalizer)
		}
		if marked.GetGeneration() != created.GetGeneration()+1 {
			t.Errorf("generation: got %d; want %d (incremented when deletionTimestamp is set)", marked.GetGeneration(), created.GetGeneration()+1)
		}
		if marked.GetDeletionGracePeriodSeconds() == nil {
			t.Errorf("deletionGracePeriodSeconds: got unset; want set")
		}
	})

	t.Run("no new finalizers", func(t *testing.T) {
		u := marked.DeepCopy()
		u.SetFinalizers([]string{holdFinalizer, "example.com/another"})
		_, err := c.Update(ctx, u, metav1.UpdateOptions{})
		if !apierrors.IsInvalid(err) {
			t.Errorf("adding a finalizer after deletion started: got %v; want 422 Invalid as kube answers", err)
		}
	})

	t.Run("other updates allowed", func(t *testing.T) {
		u := marked.DeepCopy()
		u.SetLabels(map[string]string{"still": "here"})
		got, err := c.Update(ctx, u, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("label update while terminating: %v", err)
		}
		marked = got
	})

	t.Run("removing the last finalizer removes the object", func(t *testing.T) {
		u := marked.DeepCopy()
		u.SetFinalizers(nil)
		if _, err := c.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update removing the finalizer: %v", err)
		}
		if _, err := c.Get(ctx, "fin", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get after the last finalizer is gone: got %v; want NotFound", err)
		}
		// MODIFIED (deletionTimestamp), MODIFIED (labels), then DELETED.
		expectEvents(t, wt, []wantEvent{{watch.Modified, "fin"}, {watch.Modified, "fin"}, {watch.Deleted, "fin"}})
	})
}

// META-6, DEL-1: deleting a namespace marks it Terminating, refuses new
// content, removes every object in it and then the namespace itself.
func TestNamespaceDeletion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	nsc := e.dyn.Resource(namespacesGVR)
	ns := e.namespace(t, "doomed")
	keep := e.namespace(t, "kept")

	e.create(t, configMapsGVR, configMap(ns, "cm1", nil))
	e.create(t, widgetsGVR, widget(ns, "w1", "red", 1, nil))
	held := widget(ns, "held", "red", 1, nil)
	held.SetFinalizers([]string{holdFinalizer})
	e.create(t, widgetsGVR, held)
	e.create(t, widgetsGVR, widget(keep, "w1", "red", 1, nil))

	t.Run("default exists", func(t *testing.T) {
		if _, err := nsc.Get(ctx, "default", metav1.GetOptions{}); err != nil {
			t.Errorf("get namespace default: %v", err)
		}
	})

	if err := nsc.Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete namespace: %v", err)
	}

	// The held widget keeps the namespace Terminating until its finalizer
	// goes; everything else in it is removed meanwhile.
	poll(t, "the unfinalized objects of the namespace to be removed", func(ctx context.Context) (bool, error) {
		w, err := e.widgets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		cms, err := e.configMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		return len(cms.Items) == 0 && slices.Equal(names(w.Items), []string{"held"}), nil
	})

	t.Run("terminating", func(t *testing.T) {
		got, err := nsc.Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get namespace while an object in it holds a finalizer: %v; want it present", err)
		}
		if got.GetDeletionTimestamp() == nil {
			t.Errorf("namespace deletionTimestamp: got unset; want set")
		}
		if phase, _, _ := unstructured.NestedString(got.Object, "status", "phase"); phase != "Terminating" {
			t.Errorf("namespace status.phase: got %q; want Terminating", phase)
		}
		w, err := e.widgets(ns).Get(ctx, "held", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get held widget: %v", err)
		}
		if w.GetDeletionTimestamp() == nil {
			t.Errorf("held widget deletionTimestamp: got unset; want set by the namespace deletion")
		}
	})

	t.Run("no new content", func(t *testing.T) {
		_, err := e.configMaps(ns).Create(ctx, configMap(ns, "late", nil), metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) {
			t.Errorf("create in a terminating namespace: got %v; want Forbidden", err)
		}
	})

	t.Run("gone once the last finalizer is removed", func(t *testing.T) {
		if _, err := e.widgets(ns).Patch(ctx, "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatalf("remove finalizer: %v", err)
		}
		poll(t, "namespace "+ns+" to be gone", func(ctx context.Context) (bool, error) {
			_, err := nsc.Get(ctx, ns, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
		w, err := e.dyn.Resource(widgetsGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("list widgets: %v", err)
		}
		var left []string
		for _, it := range w.Items {
			left = append(left, it.GetNamespace()+"/"+it.GetName())
		}
		if !slices.Equal(left, []string{keep + "/w1"}) {
			t.Errorf("widgets left: got %v; want [%s/w1] (other namespaces untouched)", left, keep)
		}
		// The name is free again.
		e.namespace(t, ns)
	})
}
