package conformance

import (
	"context"
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// newClientset returns a typed clientset for e in client-go's default
// configuration: protobuf bodies, Accept protobuf then JSON (CODEC-3).
func newClientset(t *testing.T, e *env) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(e.config())
	if err != nil {
		t.Fatalf("kubernetes.NewForConfig: %v", err)
	}
	return cs
}

// The typed clientset on configmaps and namespaces.
func TestTypedClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	cs := newClientset(t, e)

	t.Run("namespaces", func(t *testing.T) {
		ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "typed"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create namespace: %v", err)
		}
		if ns.UID == "" || ns.ResourceVersion == "" || ns.CreationTimestamp.IsZero() {
			t.Errorf("created namespace metadata: got uid %q rv %q created %v; want all set", ns.UID, ns.ResourceVersion, ns.CreationTimestamp)
		}
		if ns.Status.Phase != corev1.NamespaceActive {
			t.Errorf("namespace status.phase: got %q; want %q", ns.Status.Phase, corev1.NamespaceActive)
		}
		l, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("list namespaces: %v", err)
		}
		var got []string
		for _, n := range l.Items {
			got = append(got, n.Name)
		}
		for _, want := range []string{"default", "typed"} {
			if !slices.Contains(got, want) {
				t.Errorf("namespaces: got %v; want %q among them", got, want)
			}
		}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "Not_A_Label"}}, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("create namespace with an invalid name: got %v; want Invalid", err)
		}
	})

	cms := cs.CoreV1().ConfigMaps("typed")
	t.Run("configmaps", func(t *testing.T) {
		created, err := cms.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "cfg", Labels: map[string]string{"app": "x"}},
			Data:       map[string]string{"a": "1"},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: created.ResourceVersion})
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		defer w.Stop()

		got, err := cms.Get(ctx, "cfg", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		if got.Data["a"] != "1" || got.Namespace != "typed" {
			t.Errorf("get: got %s/%s data %v; want typed/cfg data a=1", got.Namespace, got.Name, got.Data)
		}
		got.Data["b"] = "2"
		updated, err := cms.Update(ctx, got, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update: %v", err)
		}
		if updated.Data["b"] != "2" {
			t.Errorf("update: got data %v; want b=2", updated.Data)
		}
		patched, err := cms.Patch(ctx, "cfg", types.JSONPatchType, []byte(`[{"op":"remove","path":"/data/a"}]`), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("patch: %v", err)
		}
		if _, ok := patched.Data["a"]; ok {
			t.Errorf("json patch remove: got data %v; want a removed", patched.Data)
		}
		l, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "app=x"})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		if len(l.Items) != 1 || l.Items[0].Name != "cfg" {
			t.Errorf("list app=x: got %d items; want [cfg]", len(l.Items))
		}
		if err := cms.Delete(ctx, "cfg", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete: %v", err)
		}
		if _, err := cms.Get(ctx, "cfg", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get after delete: got %v; want NotFound", err)
		}

		wantTypes := []watch.EventType{watch.Modified, watch.Modified, watch.Deleted}
		for i, want := range wantTypes {
			ev := nextEvent(t, w)
			cm, ok := ev.Object.(*corev1.ConfigMap)
			if ev.Type != want || !ok || cm.Name != "cfg" {
				t.Fatalf("typed watch event %d: got %s %T; want %s of ConfigMap cfg", i, ev.Type, ev.Object, want)
			}
		}
	})

	t.Run("errors", func(t *testing.T) {
		_, err := cms.Get(context.Background(), "missing", metav1.GetOptions{})
		var st apierrors.APIStatus
		if !apierrors.IsNotFound(err) || !errors.As(err, &st) {
			t.Fatalf("get missing: got %v; want a NotFound Status", err)
		}
		s := st.Status()
		if s.Status != metav1.StatusFailure || s.Code != 404 || s.Details == nil || s.Details.Name != "missing" || s.Details.Kind != "configmaps" {
			t.Errorf("NotFound status: got %+v; want Failure, code 404, details name=missing kind=configmaps", s)
		}
	})
}
