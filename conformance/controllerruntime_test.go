package conformance

import (
	"context"
	"testing"

	"github.com/go-logr/logr"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

var widgetGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}

// newWidgetObject returns an empty unstructured Widget for controller-runtime.
func newWidgetObject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(widgetGVK)
	return u
}

// controller-runtime's client: typed and unstructured objects, status
// writes, and its error semantics.
func TestControllerRuntimeClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatalf("AddToScheme: %v", err)
	}
	c, err := client.New(e.config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatalf("client.New: %v", err)
	}

	t.Run("typed configmap", func(t *testing.T) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cr"}, Data: map[string]string{"a": "1"}}
		if err := c.Create(ctx, cm); err != nil {
			t.Fatalf("create: %v", err)
		}
		if cm.UID == "" || cm.ResourceVersion == "" {
			t.Errorf("create did not fill in metadata: got uid %q rv %q", cm.UID, cm.ResourceVersion)
		}
		var got corev1.ConfigMap
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "cr"}, &got); err != nil {
			t.Fatalf("get: %v", err)
		}
		if got.Data["a"] != "1" {
			t.Errorf("get data: got %v; want a=1", got.Data)
		}
		patch := client.MergeFrom(got.DeepCopy())
		got.Data["b"] = "2"
		if err := c.Patch(ctx, &got, patch); err != nil {
			t.Fatalf("merge patch: %v", err)
		}
		var l corev1.ConfigMapList
		if err := c.List(ctx, &l, client.InNamespace("default")); err != nil {
			t.Fatalf("list: %v", err)
		}
		if len(l.Items) != 1 || l.Items[0].Data["b"] != "2" {
			t.Errorf("list: got %+v; want one configmap with b=2", l.Items)
		}
		if err := c.Delete(ctx, &got); err != nil {
			t.Fatalf("delete: %v", err)
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(&got), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			t.Errorf("get after delete: got %v; want NotFound", err)
		}
	})

	t.Run("unstructured widget", func(t *testing.T) {
		w := widget("default", "crw", "red", 2, map[string]string{"app": "cr"})
		if err := c.Create(ctx, w); err != nil {
			t.Fatalf("create: %v", err)
		}
		w.Object["status"] = map[string]any{"readyReplicas": int64(2)}
		if err := c.Status().Update(ctx, w); err != nil {
			t.Fatalf("status update: %v", err)
		}
		got := newWidgetObject()
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "crw"}, got); err != nil {
			t.Fatalf("get: %v", err)
		}
		if r, _ := nestedInt(t, got, "status", "readyReplicas"); r != 2 {
			t.Errorf("status.readyReplicas: got %d; want 2", r)
		}
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(widgetGVK.GroupVersion().WithKind("WidgetList"))
		if err := c.List(ctx, l, client.InNamespace("default"), client.MatchingLabels{"app": "cr"}, client.MatchingFields{"spec.color": "red"}); err != nil {
			t.Fatalf("list: %v", err)
		}
		if got := names(l.Items); len(got) != 1 || got[0] != "crw" {
			t.Errorf("list app=cr spec.color=red: got %v; want [crw]", got)
		}
		if err := c.Create(ctx, widget("default", "crw", "red", 1, nil)); !apierrors.IsAlreadyExists(err) {
			t.Errorf("create duplicate: got %v; want AlreadyExists", err)
		}
	})
}

// A controller-runtime manager runs a reconciler against the example
// server: the controller-author use case (DESIGN.md, user 3).
func TestControllerRuntimeManager(t *testing.T) {
	t.Parallel()
	// Quiet: controller-runtime otherwise warns that no logger was set.
	ctrllog.SetLogger(logr.Discard())
	e := newEnv(t)
	ns := e.namespace(t, "ctrl")
	mgr, err := ctrl.NewManager(e.config(), ctrl.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptrTo(true)},
	})
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	// The reconciler mirrors spec.replicas into status.readyReplicas.
	err = ctrl.NewControllerManagedBy(mgr).
		For(newWidgetObject()).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			w := newWidgetObject()
			if err := mgr.GetClient().Get(ctx, req.NamespacedName, w); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			replicas, _, _ := unstructured.NestedInt64(w.Object, "spec", "replicas")
			ready, _, _ := unstructured.NestedInt64(w.Object, "status", "readyReplicas")
			if ready == replicas {
				return reconcile.Result{}, nil
			}
			_ = unstructured.SetNestedField(w.Object, replicas, "status", "readyReplicas")
			return reconcile.Result{}, mgr.GetClient().Status().Update(ctx, w)
		}))
	if err != nil {
		t.Fatalf("building the controller: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}()

	e.create(t, widgetsGVR, widget(ns, "reconciled", "red", 3, nil))
	waitReady := func(want int64) {
		t.Helper()
		poll(t, "the controller to set status.readyReplicas", func(ctx context.Context) (bool, error) {
			w, err := e.widgets(ns).Get(ctx, "reconciled", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			got, _, _ := unstructured.NestedInt64(w.Object, "status", "readyReplicas")
			return got == want, nil
		})
	}
	waitReady(3)
	if _, err := e.widgets(ns).Patch(testContext(t), "reconciled", types.MergePatchType, []byte(`{"spec":{"replicas":5}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch: %v", err)
	}
	waitReady(5)
}
