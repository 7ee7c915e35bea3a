package envtest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/envtest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The request log lets a test assert what a controller did not do: a
// reconcile of an unchanged object makes no write.
func TestRequestLogNoWriteOnResync(t *testing.T) {
	t.Parallel()
	e := &envtest.Environment{}
	e.LogRequestsOnFailure(t)
	admin := newClient(t, start(t, e))
	ctx := ctxFor(t)
	r := runCopier(t, e, 0)
	setSrc(ctx, t, admin, "1")
	waitCopy(ctx, t, admin, "1")
	// Let the reconciles the copy's own events cause settle.
	settled := func() int { n := r.count(); time.Sleep(200 * time.Millisecond); return n }
	for n := settled(); n != r.count(); n = settled() {
	}
	before := r.count()
	e.ResetRequests()
	// A change the copy does not depend on: a label.
	var src corev1.ConfigMap
	if err := admin.Get(ctx, client.ObjectKey{Namespace: "default", Name: "src"}, &src); err != nil {
		t.Fatal(err)
	}
	src.Labels = map[string]string{"touched": "yes"}
	if err := admin.Update(ctx, &src); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return r.count() > before, nil
	}); err != nil {
		t.Fatalf("no reconcile after the label changed: %v", err)
	}
	var writes []envtest.Request
	for _, q := range e.Requests() {
		if q.IsWrite() && q.User == controllerUser {
			writes = append(writes, q)
		}
	}
	if len(writes) != 0 {
		t.Errorf("the controller wrote %v after an unchanged reconcile; want no write", writes)
	}
}

// Every request is logged with what kube's request info reads, the user
// (from the token, or the registry's authentication), the code and dry
// run, in both transports.
func TestRequestLog(t *testing.T) {
	t.Parallel()
	for _, inProcess := range []bool{false, true} {
		t.Run(fmt.Sprintf("in-process=%v", inProcess), func(t *testing.T) {
			t.Parallel()
			e := &envtest.Environment{InProcess: inProcess}
			cfg := start(t, e)
			vera, err := e.AddUser(envtest.User{Name: "vera"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx := ctxFor(t)
			cs := kubernetes.NewForConfigOrDie(cfg)
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
			e.ResetRequests()
			if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{DryRun: []string{"All"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := kubernetes.NewForConfigOrDie(vera.Config()).CoreV1().ConfigMaps("default").Get(ctx, "a", metav1.GetOptions{}); err == nil {
				t.Fatal("vera read a configmap without a role")
			}
			if _, err := cs.Discovery().ServerVersion(); err != nil {
				t.Fatal(err)
			}
			// Over TLS a client may read the whole response before the
			// server's handler has returned and logged it.
			var got []envtest.Request
			if err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
				got = e.Requests()
				for _, r := range got {
					if r.Code == 0 {
						return false, nil
					}
				}
				return true, nil
			}); err != nil {
				t.Fatalf("requests still in flight: %v", got)
			}
			want := []envtest.Request{
				{Verb: "create", Version: "v1", Resource: "configmaps", Namespace: "default", Path: "/api/v1/namespaces/default/configmaps", User: "admin", Code: 201, DryRun: true},
				{Verb: "create", Version: "v1", Resource: "configmaps", Namespace: "default", Path: "/api/v1/namespaces/default/configmaps", User: "admin", Code: 201},
				{Verb: "get", Version: "v1", Resource: "configmaps", Namespace: "default", Name: "a", Path: "/api/v1/namespaces/default/configmaps/a", User: "vera", Code: 403},
				{Verb: "get", Path: "/version", User: "admin", Code: 200},
			}
			if len(got) != len(want) {
				t.Fatalf("got %d requests %v; want %d", len(got), got, len(want))
			}
			for i := range want {
				g := got[i]
				if g.Start.IsZero() || g.Duration <= 0 || !strings.Contains(g.UserAgent, "/") {
					t.Errorf("request %d: start %v, duration %v, user agent %q; want all set", i, g.Start, g.Duration, g.UserAgent)
				}
				g.Start, g.Duration, g.UserAgent = time.Time{}, 0, ""
				if g != want[i] {
					t.Errorf("request %d:\ngot  %+v\nwant %+v", i, g, want[i])
				}
			}
		})
	}
}

// fakeTB records what LogRequestsOnFailure does with a test.
type fakeTB struct {
	failed   bool
	cleanups []func()
	logs     []string
}

func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Failed() bool      { return f.failed }
func (f *fakeTB) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}

// The log is printed when the test failed, and only then.
func TestLogRequestsOnFailure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		failed bool
		want   []string
	}{
		{name: "passed", failed: false},
		{name: "failed", failed: true, want: []string{"served 1 requests:", `get    configmaps default/nope user="admin" 404`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := &envtest.Environment{InProcess: true}
			cfg := start(t, e)
			tb := &fakeTB{failed: tc.failed}
			e.LogRequestsOnFailure(tb)
			e.ResetRequests()
			_, _ = kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps("default").Get(ctxFor(t), "nope", metav1.GetOptions{})
			for _, fn := range tb.cleanups {
				fn()
			}
			if len(tc.want) == 0 && len(tb.logs) != 0 {
				t.Errorf("logged %q; want nothing", tb.logs)
			}
			for _, w := range tc.want {
				if len(tb.logs) != 1 || !strings.Contains(tb.logs[0], w) {
					t.Errorf("logged %q; want one line containing %q", tb.logs, w)
				}
			}
		})
	}
}

// The in-process transport: no listener, typed (protobuf) and JSON
// requests, a watch streaming events, a client that cancels, and a
// stopped server answering ErrStopped.
func TestInProcess(t *testing.T) {
	t.Parallel()
	e := &envtest.Environment{InProcess: true}
	cfg, err := e.Start()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Transport == nil || len(cfg.CAData) != 0 || e.ControlPlane.APIServer.SecureServing.Port != "" {
		t.Errorf("config transport %v, CA %d bytes, port %q; want a transport, no CA, no port", cfg.Transport, len(cfg.CAData), e.ControlPlane.APIServer.SecureServing.Port)
	}
	ctx := ctxFor(t)
	cs := kubernetes.NewForConfigOrDie(cfg)
	w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b"} {
		if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"a", "b"} {
		select {
		case ev := <-w.ResultChan():
			if cm, ok := ev.Object.(*corev1.ConfigMap); !ok || ev.Type != "ADDED" || cm.Name != name {
				t.Errorf("event %s %T; want ADDED of %s", ev.Type, ev.Object, name)
			}
		case <-ctx.Done():
			t.Fatal("no watch event")
		}
	}
	w.Stop()
	jsonCfg := rest.CopyConfig(cfg)
	jsonCfg.ContentType = "application/json"
	if l, err := kubernetes.NewForConfigOrDie(jsonCfg).CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 2 {
		t.Errorf("JSON list: %v, %v; want 2 items", l, err)
	}
	// A request whose client gives up while the server holds it.
	in, err := e.InjectFault(envtest.Fault{Verb: "get", Resource: "configmaps", Delay: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := cs.CoreV1().ConfigMaps("default").Get(short, "a", metav1.GetOptions{}); err == nil {
		t.Error("a get held for a minute answered within 50ms")
	}
	in.Remove()
	if err := e.Stop(); err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().ConfigMaps("default").Get(ctx, "a", metav1.GetOptions{})
	if err == nil || !strings.Contains(err.Error(), envtest.ErrStopped.Error()) {
		t.Errorf("get after Stop: %v; want %v", err, envtest.ErrStopped)
	}
	var last envtest.Request
	for _, q := range e.Requests() {
		if q.Fault != "" {
			last = q
		}
	}
	if last.Code != envtest.StatusClientClosed {
		t.Errorf("the held request logged %v; want code %d", last, envtest.StatusClientClosed)
	}
}

// A Fault that asks for nothing, or for two answers, is refused.
func TestInjectFaultInvalid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fault envtest.Fault
		ok    bool
	}{
		{name: "nothing", fault: envtest.Fault{Verb: "get"}},
		{name: "two answers", fault: envtest.Fault{Code: 500, ExpireWatch: true}},
		{name: "code not an error", fault: envtest.Fault{Code: 200}},
		{name: "retry-after without code", fault: envtest.Fault{Delay: time.Second, RetryAfter: time.Second}},
		{name: "served without code", fault: envtest.Fault{Delay: time.Second, Served: true}},
		{name: "watch fault on a get", fault: envtest.Fault{Verb: "get", ExpireWatch: true}},
		{name: "negative count", fault: envtest.Fault{Code: 500, Count: -1}},
		{name: "stale watch", fault: envtest.Fault{Verb: "watch", StaleAt: "5"}},
		{name: "stale status", fault: envtest.Fault{Subresource: "status", StaleAt: "5"}},
		{name: "stale and a code", fault: envtest.Fault{StaleAt: "5", Code: 500}},
		{name: "stale", fault: envtest.Fault{Verb: "list", StaleAt: "5"}, ok: true},
		{name: "conflict", fault: envtest.Fault{Code: http.StatusConflict}, ok: true},
		{name: "delay", fault: envtest.Fault{Delay: time.Millisecond}, ok: true},
		{name: "drop watch", fault: envtest.Fault{Verb: "watch", DropWatchAfter: time.Second}, ok: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := (&envtest.Environment{}).InjectFault(tc.fault)
			if (err == nil) != tc.ok {
				t.Errorf("InjectFault(%+v): %v; want ok %v", tc.fault, err, tc.ok)
			}
		})
	}
}

// Faults match by verb, group, resource, subresource, namespace, name
// and user; Count limits them; the first injected matching takes the
// request; a fault answers with kube's Status, which client-go reads.
func TestFaultMatching(t *testing.T) {
	t.Parallel()
	e := &envtest.Environment{InProcess: true}
	cfg := start(t, e)
	ctx := ctxFor(t)
	cs := kubernetes.NewForConfigOrDie(cfg)
	for _, name := range []string{"a", "b"} {
		if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	get := func(name string) error {
		_, err := cs.CoreV1().ConfigMaps("default").Get(ctx, name, metav1.GetOptions{})
		return err
	}
	for _, tc := range []struct {
		name  string
		fault envtest.Fault
		// The codes of get a, get b, get a, in order.
		want [3]int
	}{
		{name: "by name", fault: envtest.Fault{Name: "a", Code: 500}, want: [3]int{500, 200, 500}},
		{name: "count", fault: envtest.Fault{Resource: "configmaps", Code: 500, Count: 2}, want: [3]int{500, 500, 200}},
		{name: "other verb", fault: envtest.Fault{Verb: "list", Code: 500}, want: [3]int{200, 200, 200}},
		{name: "other group", fault: envtest.Fault{Group: "apps", Code: 500}, want: [3]int{200, 200, 200}},
		{name: "other namespace", fault: envtest.Fault{Namespace: "kube-system", Code: 500}, want: [3]int{200, 200, 200}},
		{name: "other user", fault: envtest.Fault{User: "vera", Code: 500}, want: [3]int{200, 200, 200}},
		{name: "user", fault: envtest.Fault{User: "admin", Verb: "get", Code: 409, Count: 1}, want: [3]int{409, 200, 200}},
		{name: "subresource", fault: envtest.Fault{Subresource: "status", Code: 500}, want: [3]int{200, 200, 200}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := e.InjectFault(tc.fault)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Remove()
			var got [3]int
			for i, name := range []string{"a", "b", "a"} {
				got[i] = 200
				if err := get(name); err != nil {
					got[i] = codeOf(err)
				}
			}
			if got != tc.want {
				t.Errorf("codes %v; want %v", got, tc.want)
			}
		})
	}
	// The first injected takes the request.
	first, _ := e.InjectFault(envtest.Fault{Name: "a", Code: 409, Count: 1})
	second, _ := e.InjectFault(envtest.Fault{Name: "a", Code: 500, Count: 1})
	if c1, c2 := codeOf(get("a")), codeOf(get("a")); c1 != 409 || c2 != 500 || first.Hits() != 1 || second.Hits() != 1 {
		t.Errorf("codes %d, %d, hits %d, %d; want 409, 500, 1, 1", c1, c2, first.Hits(), second.Hits())
	}
}

// codeOf is the HTTP code of a client's error; 0 if it has none.
func codeOf(err error) int {
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		return int(s.Status().Code)
	}
	return 0
}
