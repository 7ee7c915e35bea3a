package controller_test

import (
	"context"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/kapi-dev/kapi/envtest/examples/controller"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// This suite is written against controller-runtime's envtest API only
// (Environment, User, CRDInstallOptions: see envtest_kapi_test.go). With
// -tags crenvtest it runs on controller-runtime's envtest (kube-apiserver
// and etcd binaries from KUBEBUILDER_ASSETS); without, on kapi/envtest.

func init() {
	// The managers' logs are not the tests' subject (a kubebuilder suite
	// sets a zap logger here).
	ctrl.SetLogger(logr.Discard())
}

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := controller.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// newEnvironment is the suite's environment, as a kubebuilder project's
// suite_test.go makes it.
func newEnvironment() *Environment {
	return &Environment{
		CRDDirectoryPaths:     []string{filepath.Join("config", "crd")},
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme,
	}
}

// startEnvironment starts an environment of its own for t, stopped when
// t ends.
func startEnvironment(t testing.TB) (*Environment, *rest.Config) {
	t.Helper()
	env := newEnvironment()
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting the environment: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping the environment: %v", err)
		}
	})
	return env, cfg
}

// startManager runs the controller in a manager against cfg until t
// ends, and returns the manager's client.
func startManager(t testing.TB, cfg *rest.Config) client.Client {
	t.Helper()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:     scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr(true)}, // one manager per test
	})
	if err != nil {
		t.Fatalf("manager: %v", err)
	}
	if err := (&controller.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		t.Fatalf("controller: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	// The client reads through the manager's cache, which refuses reads
	// until it has started ("the cache is not started"): wait for it, as
	// controller-runtime's own suites do.
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatalf("manager: the cache did not sync")
	}
	return mgr.GetClient()
}

func ctxFor(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func greeting(ns, name, message string) *controller.Greeting {
	return &controller.Greeting{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: controller.GreetingSpec{Message: message}}
}

// waitFor polls until cond holds (a controller acts asynchronously).
func waitFor(ctx context.Context, t testing.TB, what string, cond func(context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 30*time.Second, true, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// waitConfigMap waits for the Greeting's ConfigMap to hold message and
// its status to record the Greeting's generation; it returns both.
func waitConfigMap(ctx context.Context, t testing.TB, c client.Client, key types.NamespacedName, message string) (*corev1.ConfigMap, *controller.Greeting) {
	t.Helper()
	var cm corev1.ConfigMap
	var g controller.Greeting
	waitFor(ctx, t, "the ConfigMap and status of "+key.String(), func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, &g); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		err := c.Get(ctx, types.NamespacedName{Namespace: key.Namespace, Name: controller.ConfigMapName(key.Name)}, &cm)
		if err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return cm.Data["message"] == message && g.Status.ObservedGeneration == g.Generation, nil
	})
	return &cm, &g
}

// Each Greeting gets its ConfigMap, owned by it, and a status; a changed
// message reaches the ConfigMap.
func TestGreeting(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		messages []string // the first is created with, the others updated to
	}{
		{name: "created", messages: []string{"hello"}},
		{name: "updated", messages: []string{"hello", "bonjour"}},
		{name: "updated twice", messages: []string{"hello", "bonjour", "hallo"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, cfg := startEnvironment(t)
			c := startManager(t, cfg)
			ctx := ctxFor(t)
			g := greeting("default", "g", tt.messages[0])
			if err := c.Create(ctx, g); err != nil {
				t.Fatalf("create: %v", err)
			}
			key := client.ObjectKeyFromObject(g)
			cm, got := waitConfigMap(ctx, t, c, key, tt.messages[0])
			if ref := metav1.GetControllerOf(cm); ref == nil || ref.UID != got.UID || ref.Kind != "Greeting" {
				t.Fatalf("ConfigMap controller reference %+v; want the Greeting %s", ref, got.UID)
			}
			if got.Status.ConfigMap != cm.Name {
				t.Fatalf("status.configMap %q; want %q", got.Status.ConfigMap, cm.Name)
			}
			for _, m := range tt.messages[1:] {
				waitFor(ctx, t, "an update of "+key.String(), func(ctx context.Context) (bool, error) {
					var cur controller.Greeting
					if err := c.Get(ctx, key, &cur); err != nil {
						return false, err
					}
					cur.Spec.Message = m
					err := c.Update(ctx, &cur)
					return err == nil, client.IgnoreNotFound(ignoreConflict(err))
				})
				waitConfigMap(ctx, t, c, key, m)
			}
		})
	}
}

func ignoreConflict(err error) error {
	if apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// A second reconcile of an unchanged Greeting writes nothing: every
// request it sends is a read.
func TestSecondReconcileWritesNothing(t *testing.T) {
	t.Parallel()
	_, cfg := startEnvironment(t)
	ctx := ctxFor(t)
	cfg = rest.CopyConfig(cfg)
	log := &methodLog{}
	cfg.Wrap(log.wrap)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, greeting("default", "quiet", "hi")); err != nil {
		t.Fatal(err)
	}
	r := &controller.Reconciler{Client: c}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "quiet"}}
	for i, wantWrites := range []bool{true, false} {
		log.reset()
		if _, err := r.Reconcile(ctx, req); err != nil {
			t.Fatalf("reconcile %d: %v", i+1, err)
		}
		if writes := log.writes(); (len(writes) > 0) != wantWrites {
			t.Fatalf("reconcile %d wrote %v; want writes: %v", i+1, writes, wantWrites)
		}
	}
}

// methodLog records the method and path of each request but GETs.
type methodLog struct {
	mu sync.Mutex
	w  []string
}

func (l *methodLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return rtFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet {
			l.mu.Lock()
			l.w = append(l.w, req.Method+" "+req.URL.Path)
			l.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

func (l *methodLog) reset() {
	l.mu.Lock()
	l.w = nil
	l.mu.Unlock()
}

func (l *methodLog) writes() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.w...)
}

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// A user in a group bound to a view role reads Greetings and may not
// delete them (AddUser, with RBAC as envtest's kube-apiserver runs it).
func TestViewerUser(t *testing.T) {
	t.Parallel()
	env, cfg := startEnvironment(t)
	ctx := ctxFor(t)
	admin, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "greeting-viewer"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"example.kapi.dev"}, Resources: []string{"greetings"}, Verbs: []string{"get", "list", "watch"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "greeting-viewers"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "greeting-viewer"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "viewers"}}},
		greeting("default", "seen", "hi"),
	} {
		if err := admin.Create(ctx, o); err != nil {
			t.Fatalf("create %T: %v", o, err)
		}
	}
	u, err := env.AddUser(User{Name: "vera", Groups: []string{"viewers"}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(u.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		run       func() error
		forbidden bool
	}{
		{name: "get", run: func() error {
			return c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "seen"}, &controller.Greeting{})
		}},
		{name: "list", run: func() error { return c.List(ctx, &controller.GreetingList{}, client.InNamespace("default")) }},
		{name: "delete", run: func() error { return c.Delete(ctx, greeting("default", "seen", "")) }, forbidden: true},
		{name: "configmaps", run: func() error { return c.List(ctx, &corev1.ConfigMapList{}) }, forbidden: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if got := apierrors.IsForbidden(err); got != tt.forbidden || (!tt.forbidden && err != nil) {
				t.Fatalf("got %v; want forbidden: %v", err, tt.forbidden)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
