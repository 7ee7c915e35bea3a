package envtest_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/envtest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// copier is a controller-runtime reconciler: the ConfigMap named src
// gets a copy, <name>-copy, holding its data and owned by it. It records
// every error its reconciles return, so a test sees its retry path.
type copier struct {
	client.Client
	mu         sync.Mutex
	reconciles int
	errs       []error
}

func (r *copier) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	r.mu.Lock()
	r.reconciles++
	r.mu.Unlock()
	err := r.reconcile(ctx, req)
	if err != nil {
		r.mu.Lock()
		r.errs = append(r.errs, err)
		r.mu.Unlock()
	}
	return ctrl.Result{}, err
}

func (r *copier) reconcile(ctx context.Context, req ctrl.Request) error {
	if req.Name != "src" {
		return nil
	}
	var src corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &src); err != nil {
		return client.IgnoreNotFound(err)
	}
	cp := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: src.Namespace, Name: src.Name + "-copy"}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, cp, func() error {
		cp.Data = src.Data
		return controllerutil.SetControllerReference(&src, cp, r.Scheme())
	})
	return err
}

func (r *copier) errors() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.errs)
}

func (r *copier) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reconciles
}

// controllerUser is the user the manager runs as; faults match it, so
// the test's own requests (as the admin) are not taken.
const controllerUser = "controller"

// runCopier starts a manager running copier as controllerUser.
func runCopier(t *testing.T, e *envtest.Environment, reconcileTimeout time.Duration) *copier {
	t.Helper()
	u, err := e.AddUser(envtest.User{Name: controllerUser, Groups: []string{"system:masters"}}, &rest.Config{QPS: 1000, Burst: 2000})
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(u.Config(), ctrl.Options{
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr(true), ReconciliationTimeout: reconcileTimeout},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &copier{Client: mgr.GetClient()}
	if err := ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Owns(&corev1.ConfigMap{}).Complete(r); err != nil {
		t.Fatal(err)
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
	return r
}

// waitCopy waits until src's copy holds data.
func waitCopy(ctx context.Context, t *testing.T, c client.Client, data string) {
	t.Helper()
	var cp corev1.ConfigMap
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "src-copy"}, &cp)
		return err == nil && cp.Data["v"] == data, client.IgnoreNotFound(err)
	})
	if err != nil {
		t.Fatalf("the copy never held v=%s: %v (has %v)", data, err, cp.Data)
	}
}

func setSrc(ctx context.Context, t *testing.T, c client.Client, data string) {
	t.Helper()
	src := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "src"}}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, src, func() error {
		src.Data = map[string]string{"v": data}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// byController is the log's requests of the controller's user that match.
func byController(reqs []envtest.Request, keep func(envtest.Request) bool) []envtest.Request {
	var out []envtest.Request
	for _, r := range reqs {
		if r.User == controllerUser && keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// index is the position of the first request after from that keep
// matches, or -1.
func index(reqs []envtest.Request, from int, keep func(envtest.Request) bool) int {
	for i := from + 1; i < len(reqs); i++ {
		if keep(reqs[i]) {
			return i
		}
	}
	return -1
}

// isInformer tells the controller's lists and watches of configmaps that
// no fault took.
func isInformer(r envtest.Request) bool {
	return r.User == controllerUser && r.Resource == "configmaps" && (r.Verb == "list" || r.Verb == "watch") && r.Fault == ""
}

func isCopyWrite(verb string) func(envtest.Request) bool {
	return func(r envtest.Request) bool {
		return r.Verb == verb && r.Resource == "configmaps" && (r.Name == "src-copy" || verb == "create")
	}
}

// Each fault of Fault is driven through a real controller-runtime
// reconciler (copier, its manager running as the user the fault
// matches), and the test observes the retry path it takes: in the
// request log (the failed request, then the retry that succeeded) and in
// the errors the reconciler returned. Every case ends with the copy
// right: the controller recovered.
func TestFaultsThroughController(t *testing.T) {
	t.Parallel()
	type observe struct {
		reqs []envtest.Request // the controller's, in order
		errs []error           // the reconciler's
	}
	for _, tc := range []struct {
		name string
		// before: whether the fault is in force before the manager
		// starts (watch faults), else after the first copy is made.
		before  bool
		fault   envtest.Fault
		timeout time.Duration // the reconciler's (ReconciliationTimeout)
		// until, if set, is waited for once the copy is right (the
		// client's answer may come after the write it reports on).
		until func(o observe) bool
		check func(t *testing.T, o observe)
	}{{
		name:  "409 conflict on update: the reconcile fails and is retried",
		fault: envtest.Fault{Verb: "update", Resource: "configmaps", Name: "src-copy", Code: 409, Count: 2},
		check: func(t *testing.T, o observe) {
			updates := byController(o.reqs, isCopyWrite("update"))
			if len(updates) < 3 || updates[0].Code != 409 || updates[1].Code != 409 || updates[len(updates)-1].Code != 200 {
				t.Errorf("updates of the copy: %v; want 409, 409, then 200", updates)
			}
			if n := countErrs(o.errs, apierrors.IsConflict); n < 2 {
				t.Errorf("the reconciler returned %d conflicts (%v); want 2 at least", n, o.errs)
			}
		},
	}, {
		name:  "500 on create: the reconcile fails and is retried",
		fault: envtest.Fault{Verb: "create", Resource: "configmaps", Code: 500, Count: 1},
		check: func(t *testing.T, o observe) {
			creates := byController(o.reqs, isCopyWrite("create"))
			if len(creates) != 2 || creates[0].Code != 500 || creates[0].Fault != "500" || creates[1].Code != 201 {
				t.Errorf("creates: %v; want 500 (fault), then 201", creates)
			}
			if n := countErrs(o.errs, apierrors.IsInternalError); n != 1 {
				t.Errorf("the reconciler returned %d internal errors (%v); want 1", n, o.errs)
			}
		},
	}, {
		name:  "429 with Retry-After: client-go retries by itself, the reconcile succeeds",
		fault: envtest.Fault{Verb: "create", Resource: "configmaps", Code: 429, RetryAfter: time.Second, Count: 1},
		check: func(t *testing.T, o observe) {
			creates := byController(o.reqs, isCopyWrite("create"))
			if len(creates) != 2 || creates[0].Code != 429 || creates[1].Code != 201 {
				t.Errorf("creates: %v; want 429, then 201", creates)
			}
			if len(o.errs) != 0 {
				t.Errorf("the reconciler returned %v; want no error (client-go retried)", o.errs)
			}
		},
	}, {
		name:  "503 with Retry-After: client-go retries by itself, the reconcile succeeds",
		fault: envtest.Fault{Verb: "create", Resource: "configmaps", Code: 503, RetryAfter: time.Second, Count: 1},
		check: func(t *testing.T, o observe) {
			creates := byController(o.reqs, isCopyWrite("create"))
			if len(creates) != 2 || creates[0].Code != 503 || creates[1].Code != 201 {
				t.Errorf("creates: %v; want 503, then 201", creates)
			}
			if len(o.errs) != 0 {
				t.Errorf("the reconciler returned %v; want no error (client-go retried)", o.errs)
			}
		},
	}, {
		name:  "504 after the write: the outcome is unknown, the retry finds the object",
		fault: envtest.Fault{Verb: "create", Resource: "configmaps", Code: 504, Served: true, Count: 1},
		until: func(o observe) bool { return countErrs(o.errs, apierrors.IsTimeout) > 0 },
		check: func(t *testing.T, o observe) {
			creates := byController(o.reqs, isCopyWrite("create"))
			if len(creates) == 0 || creates[0].Code != 504 {
				t.Errorf("creates: %v; want the first answered 504", creates)
			}
			for _, c := range creates[1:] {
				if c.Code == 201 {
					t.Errorf("creates: %v; want none to succeed after the 504 (the first was written)", creates)
				}
			}
			if n := countErrs(o.errs, apierrors.IsTimeout); n != 1 {
				t.Errorf("the reconciler returned %d timeouts (%v); want 1", n, o.errs)
			}
		},
	}, {
		name:    "a slow create beyond the reconcile timeout: the reconcile times out and is retried",
		fault:   envtest.Fault{Verb: "create", Resource: "configmaps", Delay: 10 * time.Second, Count: 1},
		timeout: 300 * time.Millisecond,
		check: func(t *testing.T, o observe) {
			creates := byController(o.reqs, isCopyWrite("create"))
			if len(creates) != 2 || creates[0].Fault == "" || creates[1].Code != 201 {
				t.Errorf("creates: %v; want the delayed one, then 201", creates)
			}
			if n := countErrs(o.errs, func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }); n != 1 {
				t.Errorf("the reconciler returned %d deadline errors (%v); want 1", n, o.errs)
			}
		},
	}, {
		name:   "a dropped watch: the informer watches again and sees later changes",
		before: true,
		fault:  envtest.Fault{Resource: "configmaps", DropWatchAfter: 200 * time.Millisecond, Count: 1},
		check: func(t *testing.T, o observe) {
			isWatch := func(r envtest.Request) bool { return r.Verb == "watch" && r.Resource == "configmaps" }
			watches := byController(o.reqs, isWatch)
			if len(watches) < 2 || !strings.HasPrefix(watches[0].Fault, "drop-watch") || watches[1].Fault != "" {
				t.Errorf("watches: %v; want the dropped one, then another", watches)
			}
		},
	}, {
		name:   "an expired watch (410): the informer relists",
		before: true,
		fault:  envtest.Fault{Resource: "configmaps", ExpireWatch: true, Count: 1},
		check: func(t *testing.T, o observe) {
			expired := index(o.reqs, -1, func(r envtest.Request) bool { return r.Fault == "expire-watch" })
			if expired < 0 || o.reqs[expired].Code != 410 {
				t.Fatalf("requests: %v; want a watch answered 410", o.reqs)
			}
			again := index(o.reqs, expired, isInformer)
			if again < 0 {
				t.Errorf("requests: %v; want a list or watch of configmaps after the 410", o.reqs)
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := &envtest.Environment{}
			e.LogRequestsOnFailure(t)
			cfg := start(t, e)
			admin := newClient(t, cfg)
			ctx := ctxFor(t)
			var in *envtest.Injection
			inject := func() {
				f := tc.fault
				f.User = controllerUser
				var err error
				if in, err = e.InjectFault(f); err != nil {
					t.Fatal(err)
				}
			}
			if tc.before {
				inject()
			}
			r := runCopier(t, e, tc.timeout)
			if tc.before {
				// The informer recovered: it lists or watches again.
				if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
					reqs := e.Requests()
					i := index(reqs, -1, func(r envtest.Request) bool { return r.Fault != "" })
					return i >= 0 && index(reqs, i, isInformer) >= 0, nil
				}); err != nil {
					t.Fatalf("the informer never listed or watched again after the fault: %v", err)
				}
				setSrc(ctx, t, admin, "1")
				waitCopy(ctx, t, admin, "1")
			} else {
				setSrc(ctx, t, admin, "1")
				waitCopy(ctx, t, admin, "1")
				if !strings.Contains(tc.fault.Verb, "update") {
					// The create faults need a create to come: start again.
					if err := admin.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "src"}}); err != nil {
						t.Fatal(err)
					}
					waitGone(ctx, t, admin, "src-copy")
				}
				e.ResetRequests()
				inject()
				setSrc(ctx, t, admin, "2")
				waitCopy(ctx, t, admin, "2")
			}
			if got, want := in.Hits(), max(tc.fault.Count, 1); got != want {
				t.Errorf("the fault took %d requests; want %d", got, want)
			}
			observed := func() observe {
				var mine []envtest.Request
				for _, q := range e.Requests() {
					if q.User == controllerUser {
						mine = append(mine, q)
					}
				}
				return observe{reqs: mine, errs: r.errors()}
			}
			// The copy is written before its writer hears back: wait for
			// the controller's writes in flight to be answered.
			until := func(o observe) bool {
				for _, q := range o.reqs {
					if q.IsWrite() && q.Code == 0 {
						return false
					}
				}
				return tc.until == nil || tc.until(o)
			}
			if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
				return until(observed()), nil
			}); err != nil {
				t.Errorf("the controller never got there: %v", err)
			}
			tc.check(t, observed())
		})
	}
}

// waitGone waits for the garbage collector to delete a dependent.
func waitGone(ctx context.Context, t *testing.T, c client.Client, name string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, &corev1.ConfigMap{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("%s never went: %v", name, err)
	}
}

func countErrs(errs []error, is func(error) bool) int {
	n := 0
	for _, err := range errs {
		if is(err) {
			n++
		}
	}
	return n
}
