package conformance

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A controller-runtime manager as controller authors run one against
// kapi: leader election on a coordination.k8s.io Lease, an event recorder
// writing events.k8s.io Events, and a reconciler that owns a Deployment
// (created for each ConfigMap labelled app=web, recreated when deleted).
func TestBuiltinControllerRuntimeManager(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(e.config(), ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:  "0",
		Controller:              config.Controller{SkipNameValidation: ptrTo(true)},
		LeaderElection:          true,
		LeaderElectionID:        "web-controller",
		LeaderElectionNamespace: "default",
	})
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	recorder := mgr.GetEventRecorder("web-controller")
	c := mgr.GetClient()
	err = ctrl.NewControllerManagedBy(mgr).
		For(&corev1.ConfigMap{}).
		Owns(&appsv1.Deployment{}).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			var cm corev1.ConfigMap
			if err := c.Get(ctx, req.NamespacedName, &cm); err != nil || cm.Labels["app"] != "web" {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, Name: cm.Name}}
			op, err := controllerutil.CreateOrUpdate(ctx, c, d, func() error {
				d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": cm.Name}}
				d.Spec.Template = podTemplate(map[string]string{"app": cm.Name})
				d.Spec.Template.Spec.Containers[0].Image = cm.Data["image"]
				return controllerutil.SetControllerReference(&cm, d, scheme)
			})
			if err != nil {
				return reconcile.Result{}, err
			}
			if op != controllerutil.OperationResultNone {
				recorder.Eventf(&cm, d, corev1.EventTypeNormal, "Deployment"+string(op), "Reconcile", "deployment %s %s", d.Name, op)
			}
			return reconcile.Result{}, nil
		}))
	if err != nil {
		t.Fatalf("building the controller: %v", err)
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	select {
	case <-mgr.Elected():
	case <-ctx.Done():
		t.Fatal("the manager was never elected")
	}

	cs := newClientset(t, e)
	lease, err := cs.CoordinationV1().Leases("default").Get(ctx, "web-controller", metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Fatalf("leader election lease: %v %+v; want one with a holder", err, lease)
	}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", Labels: map[string]string{"app": "web"}}, Data: map[string]string{"image": "nginx:1.27"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	deployment := func(ctx context.Context) (*appsv1.Deployment, error) {
		return cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
	}
	var first types.UID
	poll(t, "the owned deployment", func(ctx context.Context) (bool, error) {
		d, err := deployment(ctx)
		if err != nil {
			return false, nil
		}
		if ref := metav1.GetControllerOf(d); ref == nil || ref.UID != cm.UID {
			t.Fatalf("deployment's controller: %+v; want the configmap %s", ref, cm.UID)
		}
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 || d.Spec.Template.Spec.Containers[0].Image != "nginx:1.27" {
			t.Fatalf("deployment: replicas %v image %q; want the default 1 and nginx:1.27", d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Image)
		}
		first = d.UID
		return true, nil
	})
	poll(t, "the recorder's event", func(ctx context.Context) (bool, error) {
		l, err := cs.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, ev := range l.Items {
			if ev.Reason == "Deploymentcreated" && ev.Regarding.UID == cm.UID && ev.ReportingController == "web-controller" {
				return true, nil
			}
		}
		return false, nil
	})

	// The owned deployment's deletion wakes the reconciler, which
	// creates it again.
	if err := cs.AppsV1().Deployments("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the deployment recreated", func(ctx context.Context) (bool, error) {
		d, err := deployment(ctx)
		return err == nil && d.UID != first, nil
	})
}
