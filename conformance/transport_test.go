package conformance

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
)

// Issue 10: client-go in its default configuration (the typed clientset
// speaks protobuf to configmaps) through the registry's in-process
// transport, without a socket: create, get, list and a watch.
func TestInProcessTransport(t *testing.T) {
	t.Parallel()
	reg, err := server.New(withStorage(t, server.Options{}))
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "http://kapi", Transport: reg.Transport(), QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	cms := cs.CoreV1().ConfigMaps("default")
	w, err := cms.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "in-process"}, Data: map[string]string{"a": "b"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	got, err := cms.Get(ctx, "in-process", metav1.GetOptions{})
	if err != nil || got.Data["a"] != "b" {
		t.Fatalf("get: %v %v", got, err)
	}
	l, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil || len(l.Items) != 1 {
		t.Fatalf("list: %v %v", l, err)
	}
	select {
	case ev := <-w.ResultChan():
		if cm, ok := ev.Object.(*corev1.ConfigMap); ev.Type != "ADDED" || !ok || cm.Name != "in-process" {
			t.Errorf("watch event %s %T", ev.Type, ev.Object)
		}
	case <-ctx.Done():
		t.Fatal("no watch event")
	}
}
