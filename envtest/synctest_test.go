package envtest_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kapi-dev/kapi/envtest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// An Environment runs whole inside a testing/synctest bubble with the
// in-process transport: the registry, the store, the garbage collector,
// client-go's informers and controller-runtime's manager all block on
// channels and timers only, so time is virtual — a reconciler's
// RequeueAfter of an hour comes at once, timestamps are the bubble's
// clock — and synctest.Wait tells the test the controllers have settled,
// without polling. Stop (and the manager's end) leave no goroutine in
// the bubble, or synctest.Test would fail.
func TestSynctestBubble(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		bubbleStart := time.Now()
		e := &envtest.Environment{InProcess: true, CRDDirectoryPaths: []string{crdDir}}
		cfg, err := e.Start()
		if err != nil {
			t.Fatal(err)
		}
		c := newClient(t, cfg)
		ctx, cancel := context.WithCancel(context.Background())
		mgr, err := ctrl.NewManager(cfg, ctrl.Options{
			Metrics:    metricsserver.Options{BindAddress: "0"},
			Controller: config.Controller{SkipNameValidation: ptr(true)},
		})
		if err != nil {
			t.Fatal(err)
		}
		// A controller that requeues every hour, and copier.
		var hourly atomic.Int32
		err = ctrl.NewControllerManagedBy(mgr).Named("hourly").For(&corev1.ConfigMap{}).Complete(reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
			if req.Name != "clock" {
				return reconcile.Result{}, nil
			}
			hourly.Add(1)
			return reconcile.Result{RequeueAfter: time.Hour}, nil
		}))
		if err != nil {
			t.Fatal(err)
		}
		cp := &copier{Client: mgr.GetClient()}
		if err := ctrl.NewControllerManagedBy(mgr).Named("copier").For(&corev1.ConfigMap{}).Owns(&corev1.ConfigMap{}).Complete(cp); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- mgr.Start(ctx) }()

		for _, name := range []string{"clock", "src"} {
			if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}, Data: map[string]string{"v": "1"}}); err != nil {
				t.Fatal(err)
			}
		}
		// The caches sync (client-go polls every 100ms), the
		// controllers reconcile and settle.
		time.Sleep(time.Second)
		synctest.Wait()
		var got corev1.ConfigMap
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "src-copy"}, &got); err != nil || got.Data["v"] != "1" {
			t.Errorf("after settling: the copy %v, %v; want v=1", got.Data, err)
		}
		if !got.CreationTimestamp.Time.Equal(bubbleStart) {
			t.Errorf("the copy was created at %v; want the bubble's clock, %v", got.CreationTimestamp.Time, bubbleStart)
		}
		if n := hourly.Load(); n != 1 {
			t.Errorf("after settling: %d hourly reconciles; want 1", n)
		}
		time.Sleep(3 * time.Hour)
		synctest.Wait()
		if n := hourly.Load(); n != 4 {
			t.Errorf("3 virtual hours later: %d hourly reconciles; want 4", n)
		}
		// Deleting the source: the garbage collector deletes the copy.
		if err := c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "src"}}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "src-copy"}, &got); err == nil {
			t.Errorf("the copy outlived its owner after settling")
		}
		if elapsed := time.Since(bubbleStart); elapsed < 3*time.Hour {
			t.Errorf("virtual time elapsed %v; want 3h at least", elapsed)
		}
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
		if err := e.Stop(); err != nil {
			t.Error(err)
		}
	})
}
