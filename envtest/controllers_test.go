package envtest_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/envtest"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// member is one controller-runtime manager of a leader election: a
// ConfigMap controller that runs only while the manager leads.
type member struct {
	mgr        manager.Manager
	reconciled atomic.Int32
	cancel     context.CancelFunc
	done       chan error
}

// Leader election on a Lease, in controller-runtime's default lock
// (leases, coordination.k8s.io/v1) and durations: of two managers with
// the same LeaderElectionID the first leads and runs its controller, the
// second waits (it reads the Lease and finds it held) without running
// its own; when the first stops the second takes over — the Lease names
// it, counts one transition, and its controller runs. The first releases
// the Lease as it stops with LeaderElectionReleaseOnCancel; by default it
// does not, and the second takes over once the Lease expires (15 s).
func TestLeaderElection(t *testing.T) {
	t.Parallel()
	for _, release := range []bool{true, false} {
		t.Run(map[bool]string{true: "released on stop", false: "expired (default)"}[release], func(t *testing.T) {
			t.Parallel()
			e := &envtest.Environment{}
			cfg := start(t, e)
			// Room for the Lease to expire (15 s) on a loaded machine.
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			t.Cleanup(cancel)
			const id = "kapi-envtest-leader"
			cs := kubernetes.NewForConfigOrDie(cfg)
			if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ping"}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}

			// Each manager runs as a user of its own, so the request log tells
			// their requests apart.
			run := func(user string) *member {
				u, err := e.AddUser(envtest.User{Name: user, Groups: []string{"system:masters"}}, nil)
				if err != nil {
					t.Fatal(err)
				}
				c := u.Config()
				mgr, err := ctrl.NewManager(c, ctrl.Options{
					Metrics:                       metricsserver.Options{BindAddress: "0"},
					LeaderElection:                true,
					LeaderElectionID:              id,
					LeaderElectionNamespace:       "default",
					LeaderElectionReleaseOnCancel: release,
					Controller:                    config.Controller{SkipNameValidation: ptr(true)},
				})
				if err != nil {
					t.Fatalf("NewManager: %v", err)
				}
				m := &member{mgr: mgr, done: make(chan error, 1)}
				err = ctrl.NewControllerManagedBy(mgr).Named("ping").For(&corev1.ConfigMap{}).
					Complete(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
						m.reconciled.Add(1)
						return reconcile.Result{}, nil
					}))
				if err != nil {
					t.Fatalf("controller: %v", err)
				}
				mctx, cancel := context.WithCancel(ctx)
				m.cancel = cancel
				go func() { m.done <- mgr.Start(mctx) }()
				t.Cleanup(m.stop(t))
				return m
			}
			elected := func(m *member) bool {
				select {
				case <-m.mgr.Elected():
					return true
				default:
					return false
				}
			}
			lease := func() *coordinationv1.Lease {
				l, err := cs.CoordinationV1().Leases("default").Get(ctx, id, metav1.GetOptions{})
				if err != nil {
					t.Fatalf("get lease: %v", err)
				}
				return l
			}

			first := run("member-1")
			select {
			case <-first.mgr.Elected():
			case <-ctx.Done():
				t.Fatal("the first manager was never elected")
			}
			held := lease()
			if held.Spec.HolderIdentity == nil || *held.Spec.HolderIdentity == "" || held.Spec.LeaseDurationSeconds == nil || *held.Spec.LeaseDurationSeconds != 15 ||
				held.Spec.AcquireTime == nil || held.Spec.RenewTime == nil {
				t.Fatalf("lease after the first election: %+v; want a holder, 15 s, acquire and renew times", held.Spec)
			}
			if err := pollFor(ctx, func() bool { return first.reconciled.Load() > 0 }); err != nil {
				t.Fatalf("the leader's controller never reconciled: %v", err)
			}

			second := run("member-2")
			// The second reads the Lease, finds it held, and writes nothing.
			if err := pollFor(ctx, func() bool { return countRequests(e, "member-2", "get", "leases", 200) > 0 }); err != nil {
				t.Fatalf("the second manager never read the lease: %v", err)
			}
			if elected(second) || second.reconciled.Load() != 0 {
				t.Fatalf("second manager: elected %v, %d reconciles while the first leads; want neither", elected(second), second.reconciled.Load())
			}
			if n := countRequests(e, "member-2", "update", "leases", 200); n != 0 {
				t.Fatalf("the second manager updated the held lease %d times", n)
			}
			if l := lease(); *l.Spec.HolderIdentity != *held.Spec.HolderIdentity {
				t.Fatalf("lease holder %q while the first leads; want %q", *l.Spec.HolderIdentity, *held.Spec.HolderIdentity)
			}

			first.stop(t)()
			select {
			case <-second.mgr.Elected():
			case <-ctx.Done():
				t.Fatal("the second manager never took over")
			}
			taken := lease()
			if taken.Spec.HolderIdentity == nil || *taken.Spec.HolderIdentity == *held.Spec.HolderIdentity ||
				taken.Spec.LeaseTransitions == nil || *taken.Spec.LeaseTransitions != 1 {
				t.Fatalf("lease after the takeover: holder %v, transitions %v; want the second manager and 1 (first %q)",
					deref(taken.Spec.HolderIdentity), deref(taken.Spec.LeaseTransitions), *held.Spec.HolderIdentity)
			}
			if err := pollFor(ctx, func() bool { return second.reconciled.Load() > 0 }); err != nil {
				t.Fatalf("the new leader's controller never reconciled: %v", err)
			}

		})
	}
}

// stop stops the member's manager once and reports its error.
func (m *member) stop(t *testing.T) func() {
	return func() {
		if m.cancel == nil {
			return
		}
		m.cancel()
		m.cancel = nil
		if err := <-m.done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func pollFor(ctx context.Context, cond func() bool) error {
	return wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) { return cond(), nil })
}

// countRequests counts the requests of the request log sent by user for
// verb and resource and answered code.
func countRequests(e *envtest.Environment, user, verb, resource string, code int) int {
	n := 0
	for _, r := range e.Requests() {
		if r.User == user && r.Verb == verb && r.Resource == resource && r.Code == code {
			n++
		}
	}
	return n
}

// A reconciler's events, through the manager's recorders in their default
// settings, are Events readable through the API with kube's fields: the
// deprecated GetEventRecorderFor writes core/v1 Events (involvedObject,
// source.component, count, first and last timestamps), GetEventRecorder
// events.k8s.io/v1 ones (regarding, related, action, note,
// reportingController and reportingInstance, eventTime).
func TestEventRecorder(t *testing.T) {
	t.Parallel()
	cfg := start(t, &envtest.Environment{})
	ctx := ctxFor(t)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	//lint:ignore SA1019 the deprecated recorder is what most controllers still use
	legacy := mgr.GetEventRecorderFor("legacy-recorder")
	recorder := mgr.GetEventRecorder("kapi-recorder")
	c := mgr.GetClient()
	err = ctrl.NewControllerManagedBy(mgr).Named("events").For(&corev1.ConfigMap{}).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			var cm corev1.ConfigMap
			if err := c.Get(ctx, req.NamespacedName, &cm); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			legacy.Event(&cm, corev1.EventTypeNormal, "Seen", "seen by the legacy recorder")
			recorder.Eventf(&cm, nil, corev1.EventTypeWarning, "Checked", "Check", "checked %s", cm.Name)
			return reconcile.Result{}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	cs := kubernetes.NewForConfigOrDie(cfg)
	cm, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "watched"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	var core *corev1.Event
	if err := pollFor(ctx, func() bool {
		l, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=watched,reason=Seen"})
		if err != nil || len(l.Items) == 0 {
			return false
		}
		core = &l.Items[0]
		return true
	}); err != nil {
		t.Fatalf("no core/v1 Event of the legacy recorder: %v", err)
	}
	want := corev1.ObjectReference{Kind: "ConfigMap", Namespace: "default", Name: "watched", UID: cm.UID, APIVersion: "v1", ResourceVersion: cm.ResourceVersion}
	if core.InvolvedObject != want || core.Type != corev1.EventTypeNormal || core.Message != "seen by the legacy recorder" ||
		core.Source.Component != "legacy-recorder" || core.Count < 1 || core.FirstTimestamp.IsZero() || core.LastTimestamp.IsZero() ||
		!strings.HasPrefix(core.Name, "watched.") || core.Namespace != "default" {
		t.Errorf("core/v1 Event: %+v; want involvedObject %+v, Normal, the message, source legacy-recorder, a count and timestamps, named watched.<hex>", core, want)
	}

	var ev struct {
		regarding                     corev1.ObjectReference
		reason, action, note, typ     string
		controller, instance          string
		eventTime, hasSeries, related bool
	}
	if err := pollFor(ctx, func() bool {
		l, err := cs.EventsV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "regarding.name=watched,reason=Checked"})
		if err != nil || len(l.Items) == 0 {
			return false
		}
		e := l.Items[0]
		ev.regarding, ev.reason, ev.action, ev.note, ev.typ = e.Regarding, e.Reason, e.Action, e.Note, e.Type
		ev.controller, ev.instance, ev.eventTime, ev.related = e.ReportingController, e.ReportingInstance, !e.EventTime.IsZero(), e.Related != nil
		return true
	}); err != nil {
		t.Fatalf("no events.k8s.io/v1 Event of the recorder: %v", err)
	}
	if ev.regarding.Kind != "ConfigMap" || ev.regarding.Name != "watched" || ev.regarding.UID != cm.UID || ev.action != "Check" ||
		ev.note != "checked watched" || ev.typ != corev1.EventTypeWarning || ev.controller != "kapi-recorder" ||
		!strings.HasPrefix(ev.instance, "kapi-recorder-") || !ev.eventTime || ev.related {
		t.Errorf("events.k8s.io/v1 Event: %+v; want regarding the ConfigMap, action Check, note, Warning, reportingController kapi-recorder, an instance and eventTime", ev)
	}
}

// controller-runtime's server-side apply in its default settings: Apply
// with an ApplyConfiguration creates the object owned by its field owner;
// a Patch with client.Apply by another owner that sets the same field
// differently is a 409 conflict naming the first owner and the field;
// with ForceOwnership it takes the field over.
func TestClientApply(t *testing.T) {
	t.Parallel()
	c := newClient(t, start(t, &envtest.Environment{}))
	ctx := ctxFor(t)
	key := types.NamespacedName{Namespace: "default", Name: "applied"}

	if err := c.Apply(ctx, corev1ac.ConfigMap(key.Name, key.Namespace).WithData(map[string]string{"a": "1", "b": "2"}), client.FieldOwner("alice")); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	owners := func() map[string]string {
		var cm corev1.ConfigMap
		if err := c.Get(ctx, key, &cm); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{"data": strings.Join([]string{cm.Data["a"], cm.Data["b"]}, ",")}
		for _, f := range cm.ManagedFields {
			out[f.Manager] = string(f.Operation) + " " + f.FieldsV1.GetRawString()
		}
		return out
	}
	if got := owners(); got["data"] != "1,2" || got["alice"] != `Apply {"f:data":{"f:a":{},"f:b":{}}}` {
		t.Fatalf("after alice's apply: %v; want data 1,2 and alice applying data.a and data.b", got)
	}

	bobs := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}, Data: map[string]string{"a": "9"}}
	tests := []struct {
		name    string
		opts    []client.PatchOption
		wantErr func(error) bool
		want    map[string]string
	}{
		{"conflict", []client.PatchOption{client.FieldOwner("bob")}, func(err error) bool {
			return apierrors.IsConflict(err) && strings.Contains(err.Error(), `conflict with "alice"`) && strings.Contains(err.Error(), ".data.a")
		}, map[string]string{"data": "1,2", "alice": `Apply {"f:data":{"f:a":{},"f:b":{}}}`}},
		{"force", []client.PatchOption{client.FieldOwner("bob"), client.ForceOwnership}, func(err error) bool { return err == nil },
			map[string]string{"data": "9,2", "alice": `Apply {"f:data":{"f:b":{}}}`, "bob": `Apply {"f:data":{"f:a":{}}}`}},
	}
	for _, tt := range tests {
		//lint:ignore SA1019 client.Apply as a patch type is what many controllers still use
		err := c.Patch(ctx, bobs.DeepCopy(), client.Apply, tt.opts...)
		if !tt.wantErr(err) {
			t.Fatalf("%s: Patch(client.Apply): %v", tt.name, err)
		}
		got := owners()
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("%s: %s = %q; want %q (all: %v)", tt.name, k, got[k], v, got)
			}
		}
		if _, ok := tt.want["bob"]; !ok && got["bob"] != "" {
			t.Errorf("%s: bob owns %s after a refused apply", tt.name, got["bob"])
		}
	}
}
