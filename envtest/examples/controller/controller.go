package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Reconciler keeps each Greeting's ConfigMap.
type Reconciler struct {
	client.Client
}

// ConfigMapName is the name of the ConfigMap of the Greeting named name.
func ConfigMapName(name string) string { return name + "-greeting" }

// Reconcile makes the Greeting's ConfigMap hold its message, owned by it
// (so deleting the Greeting deletes it), and records it in the status.
// An unchanged Greeting whose ConfigMap is right causes no write.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var g Greeting
	if err := r.Get(ctx, req.NamespacedName, &g); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !g.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: g.Namespace, Name: ConfigMapName(g.Name)}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = map[string]string{"message": g.Spec.Message}
		return controllerutil.SetControllerReference(&g, cm, r.Scheme())
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	if g.Status.ConfigMap == cm.Name && g.Status.ObservedGeneration == g.Generation {
		return ctrl.Result{}, nil
	}
	g.Status = GreetingStatus{ConfigMap: cm.Name, ObservedGeneration: g.Generation}
	// A conflict (the Greeting changed since the read) is returned:
	// the controller retries with backoff, reading it afresh.
	return ctrl.Result{}, r.Status().Update(ctx, &g)
}

// SetupWithManager registers the controller: Greetings, and the
// ConfigMaps they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&Greeting{}).Owns(&corev1.ConfigMap{}).Complete(r)
}
