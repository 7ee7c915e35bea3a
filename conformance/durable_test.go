package conformance

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/storage/durable"
)

// STORE-5 (issue 22): a client-go informer, in its default
// configuration, whose server restarts on the same durable data
// directory resumes its watch from its last resourceVersion: it sees
// what was written after the restart, with no new list.
func TestDurableInformerResumesAfterRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := &requestLog{}
	start := func(ln net.Listener) (stop func()) {
		t.Helper()
		store, err := durable.Open(dir, durable.Options{})
		if err != nil {
			t.Fatalf("durable.Open: %v", err)
		}
		reg, err := server.New(server.Options{Storage: store})
		if err != nil {
			t.Fatalf("server.New: %v", err)
		}
		srv := &http.Server{Handler: log.wrap(reg)}
		go srv.Serve(ln)
		return func() {
			srv.Close() // ends the informer's watch
			reg.Close()
			store.Close()
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	stop := start(ln)
	defer func() { stop() }()

	ctx := testContext(t)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("default"))
	inf := factory.Core().V1().ConfigMaps().Informer()
	handler, events := typedRecorder[*corev1.ConfigMap]()
	if _, err := inf.AddEventHandler(handler); err != nil {
		t.Fatal(err)
	}
	infCtx, cancel := context.WithCancel(context.Background())
	defer factory.Shutdown()
	defer cancel()
	factory.Start(infCtx.Done())
	if !waitInformersSynced(ctx, factory) {
		t.Fatalf("informer did not sync (requests: %v)", log.all())
	}
	cms := cs.CoreV1().ConfigMaps("default")
	before, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	expectHandlerEvents(t, "configmap", events, "add before")

	stop()
	mark := len(log.all())
	// Start again on the same address (the informer's), on the same data.
	var ln2 net.Listener
	poll(t, "the address free again", func(context.Context) (bool, error) {
		ln2, err = net.Listen("tcp", addr)
		return err == nil, nil
	})
	stop = start(ln2)
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expectHandlerEvents(t, "configmap", events, "add after")

	const collection = "/api/v1/namespaces/default/configmaps"
	var resumed bool
	for _, r := range log.all()[mark:] {
		if r.Path != collection || r.Method != http.MethodGet {
			continue
		}
		if !strings.Contains(r.Query, "watch=true") || strings.Contains(r.Query, "sendInitialEvents=true") {
			t.Errorf("after the restart the informer listed again: %v", r)
		}
		if strings.Contains(r.Query, "resourceVersion="+before.ResourceVersion) && r.Status == http.StatusOK {
			resumed = true
		}
	}
	if !resumed {
		t.Errorf("no watch from resourceVersion %s answered after the restart; requests: %v", before.ResourceVersion, log.all()[mark:])
	}
}

// waitInformersSynced waits for the factory's informers to sync.
func waitInformersSynced(ctx context.Context, f informers.SharedInformerFactory) bool {
	ctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	for _, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return false
		}
	}
	return true
}
