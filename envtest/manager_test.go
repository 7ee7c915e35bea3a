package envtest_test

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/envtest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A controller-runtime manager in its default settings runs controllers
// over a CRD kind (unstructured) and ConfigMaps (typed) and a metadata-only
// watch against Start's config: its cache syncs, its informers see
// creates, and its cached client reads what the API holds — with the
// WatchList client feature off (list, then watch) and on (a streaming
// watch with sendInitialEvents) — over loopback TLS and in-process.
func TestManager(t *testing.T) {
	// Not parallel: the client-go feature gate is process-wide.
	for _, tc := range []struct{ watchList, inProcess bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		watchList := tc.watchList
		name := map[bool]string{false: "list then watch", true: "watch list"}[watchList] + map[bool]string{false: ", tls", true: ", in-process"}[tc.inProcess]
		t.Run(name, func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, watchList)
			e := &envtest.Environment{CRDDirectoryPaths: []string{crdDir}, ErrorIfCRDPathMissing: true, InProcess: tc.inProcess}
			cfg := rest.CopyConfig(start(t, e))
			log := &requestLog{}
			cfg.Wrap(log.wrap)
			mgr, err := ctrl.NewManager(cfg, ctrl.Options{
				Metrics:    metricsserver.Options{BindAddress: "0"},
				Controller: config.Controller{SkipNameValidation: ptr(true)},
			})
			if err != nil {
				t.Fatalf("NewManager: %v", err)
			}
			seen := newSeen()
			g := &unstructured.Unstructured{}
			g.SetGroupVersionKind(gadgetGVK)
			meta := &metav1.PartialObjectMetadata{}
			meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
			for _, c := range []struct {
				name string
				obj  client.Object
				opts []builder.ForOption
			}{
				{name: "gadgets", obj: g},
				{name: "configmaps", obj: &corev1.ConfigMap{}},
			} {
				err := ctrl.NewControllerManagedBy(mgr).Named(c.name).For(c.obj, c.opts...).
					Complete(reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
						seen.add(c.name, req.NamespacedName)
						return reconcile.Result{}, nil
					}))
				if err != nil {
					t.Fatalf("controller %s: %v", c.name, err)
				}
			}
			// A metadata-only informer, as builder.OnlyMetadata sets up.
			err = ctrl.NewControllerManagedBy(mgr).Named("metadata").
				WatchesMetadata(meta, &handler.EnqueueRequestForObject{}).
				Complete(reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
					seen.add("metadata", req.NamespacedName)
					return reconcile.Result{}, nil
				}))
			if err != nil {
				t.Fatalf("metadata controller: %v", err)
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
			if !mgr.GetCache().WaitForCacheSync(ctx) {
				t.Fatalf("cache did not sync")
			}
			c := mgr.GetClient()
			if err := c.Create(ctx, gadget("default", "g", 2)); err != nil {
				t.Fatalf("create gadget: %v", err)
			}
			if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cm"}}); err != nil {
				t.Fatalf("create configmap: %v", err)
			}
			want := map[string]types.NamespacedName{
				"gadgets":    {Namespace: "default", Name: "g"},
				"configmaps": {Namespace: "default", Name: "cm"},
				"metadata":   {Namespace: "default", Name: "cm"},
			}
			for ctrlName, key := range want {
				if err := seen.wait(ctx, ctrlName, key); err != nil {
					t.Fatalf("controller %s never reconciled %s: %v", ctrlName, key, err)
				}
			}
			// The cached client reads from the informers.
			var cm corev1.ConfigMap
			if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
				return c.Get(ctx, want["configmaps"], &cm) == nil, nil
			}); err != nil {
				t.Fatalf("cached get: %v", err)
			}
			// The gadgets informer started as the feature says: a list
			// then a watch, or one watch with sendInitialEvents.
			lists, initial := log.count("/apis/test.kapi.dev/v1/gadgets")
			if watchList && (lists != 0 || initial == 0) {
				t.Errorf("gadget requests: %d lists, %d watches with sendInitialEvents; want 0 and at least 1", lists, initial)
			}
			if !watchList && (lists == 0 || initial != 0) {
				t.Errorf("gadget requests: %d lists, %d watches with sendInitialEvents; want at least 1 and 0", lists, initial)
			}
		})
	}
}

// requestLog records the URLs of the requests a rest.Config sends.
type requestLog struct {
	mu   sync.Mutex
	urls []*url.URL
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		l.mu.Lock()
		l.urls = append(l.urls, req.URL)
		l.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

// count tells how many lists (GET without watch) and watches with
// sendInitialEvents=true were sent to path.
func (l *requestLog) count(path string) (lists, initialEvents int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, u := range l.urls {
		if u.Path != path {
			continue
		}
		q := u.Query()
		switch {
		case q.Get("watch") != "true":
			lists++
		case q.Get("sendInitialEvents") == "true":
			initialEvents++
		}
	}
	return lists, initialEvents
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// seen records the requests each controller reconciled.
type seen struct {
	mu   sync.Mutex
	reqs map[string]map[types.NamespacedName]bool
}

func newSeen() *seen { return &seen{reqs: map[string]map[types.NamespacedName]bool{}} }

func (s *seen) add(ctrl string, key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reqs[ctrl] == nil {
		s.reqs[ctrl] = map[types.NamespacedName]bool{}
	}
	s.reqs[ctrl][key] = true
}

func (s *seen) wait(ctx context.Context, ctrl string, key types.NamespacedName) error {
	return wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.reqs[ctrl][key], nil
	})
}
