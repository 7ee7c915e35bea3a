package conformance

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// TestWatchBatchedProtobuf: a typed clientset in its default
// configuration (protobuf for configmaps) watches from a resourceVersion
// with 200 changes after it, which the server replays at once — the case
// where it writes several length-prefixed frames per write (issue 10; the
// batching itself is counted in registry's TestWatchBatchesPendingEvents);
// the client decodes every event, in order.
func TestWatchBatchedProtobuf(t *testing.T) {
	e := newEnv(t)
	cs, err := kubernetes.NewForConfig(e.config())
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	ns := e.namespace(t, "batch")
	cms := cs.CoreV1().ConfigMaps(ns)
	l, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	for i := range n {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i)}, Data: map[string]string{"i": fmt.Sprint(i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for i := range n {
		ev, ok := <-w.ResultChan()
		if !ok {
			t.Fatalf("watch ended after %d events; want %d", i, n)
		}
		cm, isCM := ev.Object.(*corev1.ConfigMap)
		if ev.Type != watch.Added || !isCM || cm.Name != fmt.Sprintf("cm-%03d", i) || cm.Data["i"] != fmt.Sprint(i) {
			t.Fatalf("event %d: %s %#v; want ADDED cm-%03d", i, ev.Type, ev.Object, i)
		}
	}
	watches := e.log.matching(func(r request) bool {
		return strings.Contains(r.Query, "watch=true") && r.Path == "/api/v1/namespaces/"+ns+"/configmaps"
	})
	if len(watches) != 1 || watches[0].ContentType != "application/vnd.kubernetes.protobuf;stream=watch" {
		t.Errorf("watch requests %v; want one answered in protobuf", watches)
	}
}
