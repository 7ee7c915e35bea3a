package envtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/envtest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// A stale read serves a get or a list as of an older resourceVersion:
// typed (protobuf-asking) and JSON clients read the old state, a get
// before the object existed is 404, and other requests are unaffected.
func TestStaleRead(t *testing.T) {
	t.Parallel()
	e := &envtest.Environment{InProcess: true}
	cfg := start(t, e)
	ctx := ctxFor(t)
	cs := kubernetes.NewForConfigOrDie(cfg)
	cms := cs.CoreV1().ConfigMaps("default")
	before, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"v": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old := a.ResourceVersion
	a.Data["v"] = "2"
	if _, err := cms.Update(ctx, a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	jsonCfg := rest.CopyConfig(cfg)
	jsonCfg.ContentType = "application/json"
	jsonCMs := kubernetes.NewForConfigOrDie(jsonCfg).CoreV1().ConfigMaps("default")
	for _, tc := range []struct {
		name    string
		staleAt string
		read    func() (string, error)
		want    string
		wantErr func(error) bool
	}{
		{name: "typed get", staleAt: old, want: "a v=1", read: func() (string, error) {
			cm, err := cms.Get(ctx, "a", metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			return cm.Name + " v=" + cm.Data["v"], nil
		}},
		{name: "JSON get", staleAt: old, want: "a v=1", read: func() (string, error) {
			cm, err := jsonCMs.Get(ctx, "a", metav1.GetOptions{})
			if err != nil {
				return "", err
			}
			return cm.Name + " v=" + cm.Data["v"], nil
		}},
		{name: "get before it existed", staleAt: before.ResourceVersion, wantErr: apierrors.IsNotFound, read: func() (string, error) {
			_, err := cms.Get(ctx, "a", metav1.GetOptions{})
			return "", err
		}},
		{name: "list", staleAt: old, want: "a v=1; rv " + old, read: func() (string, error) {
			l, err := cms.List(ctx, metav1.ListOptions{})
			if err != nil {
				return "", err
			}
			out := ""
			for _, cm := range l.Items {
				out += cm.Name + " v=" + cm.Data["v"] + "; "
			}
			return out + "rv " + l.ResourceVersion, nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := e.InjectFault(envtest.Fault{Resource: "configmaps", StaleAt: tc.staleAt, Count: 1})
			if err != nil {
				t.Fatal(err)
			}
			got, err := tc.read()
			switch {
			case tc.wantErr != nil && !tc.wantErr(err):
				t.Errorf("got %q, %v; want the error", got, err)
			case tc.wantErr == nil && (err != nil || got != tc.want):
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
			if in.Hits() != 1 {
				t.Errorf("the fault took %d requests; want 1", in.Hits())
			}
			// The next read is fresh.
			if cm, err := cms.Get(ctx, "a", metav1.GetOptions{}); err != nil || cm.Data["v"] != "2" {
				t.Errorf("the read after: %v, %v; want v=2", cm.Data, err)
			}
		})
	}
}

// A reconciler reading without a cache gets a stale copy while the fault
// holds: its update conflicts (409 from the registry itself: the
// resourceVersion is old), it is retried, and once reads are fresh again
// it succeeds.
func TestStaleReadThroughController(t *testing.T) {
	t.Parallel()
	e := &envtest.Environment{}
	e.LogRequestsOnFailure(t)
	admin := newClient(t, start(t, e))
	ctx := ctxFor(t)
	u, err := e.AddUser(envtest.User{Name: controllerUser, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(u.Config(), ctrl.Options{
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Reads go to the API server, as a cache-less client's do.
	direct, err := client.New(u.Config(), client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		t.Fatal(err)
	}
	r := &copier{Client: direct}
	if err := ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Owns(&corev1.ConfigMap{}).Complete(r); err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	setSrc(ctx, t, admin, "1")
	waitCopy(ctx, t, admin, "1")
	var cp corev1.ConfigMap
	if err := admin.Get(ctx, client.ObjectKey{Namespace: "default", Name: "src-copy"}, &cp); err != nil {
		t.Fatal(err)
	}
	in, err := e.InjectFault(envtest.Fault{User: controllerUser, Verb: "get", Resource: "configmaps", Name: "src-copy", StaleAt: cp.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	// Someone else changes the copy: the controller's reads of it are
	// now stale.
	cp.Labels = map[string]string{"by": "someone-else"}
	if err := admin.Update(ctx, &cp); err != nil {
		t.Fatal(err)
	}
	setSrc(ctx, t, admin, "2")
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		return countErrs(r.errors(), apierrors.IsConflict) > 0, nil
	}); err != nil {
		t.Fatalf("the stale read never made the update conflict: %v (errors %v)", err, r.errors())
	}
	in.Remove()
	waitCopy(ctx, t, admin, "2")
	// The copy is written before its writer hears back.
	var reqs []envtest.Request
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		reqs = byController(e.Requests(), func(q envtest.Request) bool { return q.Name == "src-copy" })
		for _, q := range reqs {
			if q.IsWrite() && q.Code == 0 {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	stale := index(reqs, -1, func(q envtest.Request) bool { return q.Verb == "get" && q.Fault != "" })
	conflict := index(reqs, stale, func(q envtest.Request) bool { return q.Verb == "update" && q.Code == 409 && q.Fault == "" })
	fresh := index(reqs, conflict, func(q envtest.Request) bool { return q.Verb == "update" && q.Code == 200 })
	if stale < 0 || conflict < 0 || fresh < 0 {
		t.Errorf("the controller's requests of the copy: %v; want a stale get, an update answered 409 by the registry, then one that succeeded", reqs)
	}
}
