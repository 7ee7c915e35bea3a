//go:build !crenvtest

package controller_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kapi-dev/kapi/envtest/examples/controller"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The example controller under virtual time (kapi/envtest only: an
// in-process Environment runs in a testing/synctest bubble, which
// controller-runtime's envtest, two processes on sockets, cannot):
// synctest.Wait says the controller has settled, so the test reads the
// result once, without polling; timestamps are the bubble's clock.
func TestGreetingVirtualTime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		bubbleStart := time.Now()
		env := newEnvironment()
		env.InProcess = true
		cfg, err := env.Start()
		if err != nil {
			t.Fatal(err)
		}
		// Cleanups run in the bubble, last first: the manager stops,
		// then the environment, and no goroutine is left.
		t.Cleanup(func() {
			if err := env.Stop(); err != nil {
				t.Error(err)
			}
		})
		c := startManager(t, cfg)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		settle := func() {
			time.Sleep(time.Second) // client-go's cache sync polls every 100ms
			synctest.Wait()
		}
		g := greeting("default", "g", "hello")
		if err := c.Create(ctx, g); err != nil {
			t.Fatal(err)
		}
		settle()
		key := types.NamespacedName{Namespace: "default", Name: controller.ConfigMapName("g")}
		var cm corev1.ConfigMap
		if err := c.Get(ctx, key, &cm); err != nil || cm.Data["message"] != "hello" {
			t.Fatalf("after settling: ConfigMap %v, %v; want message hello", cm.Data, err)
		}
		if !cm.CreationTimestamp.Time.Equal(bubbleStart.Add(time.Second).Truncate(time.Second)) && !cm.CreationTimestamp.Time.Equal(bubbleStart) {
			t.Errorf("the ConfigMap was created at %v; want the bubble's clock (%v)", cm.CreationTimestamp.Time, bubbleStart)
		}
		var got controller.Greeting
		if err := c.Get(ctx, client.ObjectKeyFromObject(g), &got); err != nil || got.Status.ConfigMap != key.Name {
			t.Fatalf("after settling: status %+v, %v; want configMap %s", got.Status, err, key.Name)
		}
		got.Spec.Message = "bonjour"
		if err := c.Update(ctx, &got); err != nil {
			t.Fatal(err)
		}
		settle()
		if err := c.Get(ctx, key, &cm); err != nil || cm.Data["message"] != "bonjour" {
			t.Fatalf("after the update settled: ConfigMap %v, %v; want message bonjour", cm.Data, err)
		}
		if err := c.Delete(ctx, &got); err != nil {
			t.Fatal(err)
		}
		settle()
		if err := c.Get(ctx, key, &cm); !apierrors.IsNotFound(err) {
			t.Fatalf("after the delete settled: the ConfigMap %v; want it collected", err)
		}
	})
}
