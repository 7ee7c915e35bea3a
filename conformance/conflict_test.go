package conformance

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
)

// TestConflictRetryConverges: the controller pattern of reading at
// resourceVersion "0" (served from the watch cache on cache+etcd3, maybe
// stale) and updating with retry.RetryOnConflict, from 4 goroutines on
// one object, ends with every increment applied once: a conflict makes
// the next read newer (storage/cache waits for the backend before
// answering the conflict), and no update is lost.
func TestConflictRetryConverges(t *testing.T) {
	e := newEnv(t)
	ctx := testContext(t)
	c := e.widgets("default")
	e.create(t, widgetsGVR, widget("default", "counter", "red", 0, nil))
	// The workers read with resourceVersion=0, which may be served from a
	// watch cache that has not seen the create yet (RV-2: "any", possibly
	// stale; kube's cache answers the same): wait until such a read finds
	// the object, so that a 404 below is a real failure.
	err := wait.PollUntilContextTimeout(ctx, time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := c.Get(ctx, "counter", metav1.GetOptions{ResourceVersion: "0"})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("a resourceVersion=0 read never found the widget: %v", err)
	}
	const workers, each = 4, 10
	// retry.DefaultRetry gives up after 5 tries, which 4 writers on one
	// object can use up on any store: the bound here is generous, the
	// assertion is that every increment gets through once.
	backoff := wait.Backoff{Steps: 1000, Duration: time.Millisecond, Jitter: 1}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for range each {
				err := retry.RetryOnConflict(backoff, func() error {
					cur, err := c.Get(ctx, "counter", metav1.GetOptions{ResourceVersion: "0"})
					if err != nil {
						return err
					}
					n, _, _ := unstructured.NestedInt64(cur.Object, "spec", "replicas")
					if err := unstructured.SetNestedField(cur.Object, n+1, "spec", "replicas"); err != nil {
						return err
					}
					_, err = c.Update(ctx, cur, metav1.UpdateOptions{})
					return err
				})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("an update did not go through: %v", err)
	}
	got, err := c.Get(ctx, "counter", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); n != workers*each {
		t.Errorf("replicas: got %d; want %d (every increment once)", n, workers*each)
	}
}
