package conformance

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// wantEvent is an expected watch event: its type and the object's name.
type wantEvent struct {
	typ  watch.EventType
	name string
}

func (w wantEvent) String() string { return fmt.Sprintf("%s %s", w.typ, w.name) }

// nextEvent returns the next event of w, failing the test if none arrives
// within waitTimeout or the stream ends.
func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatalf("watch ended; want another event")
		}
		return ev
	case <-time.After(waitTimeout):
		t.Fatalf("no watch event within %v", waitTimeout)
	}
	return watch.Event{}
}

// describe renders an event for failure messages.
func describe(ev watch.Event) string {
	if st, ok := ev.Object.(*metav1.Status); ok {
		return fmt.Sprintf("%s %s", ev.Type, st.Message)
	}
	if u, ok := ev.Object.(*unstructured.Unstructured); ok {
		return fmt.Sprintf("%s %s (rv %s)", ev.Type, u.GetName(), u.GetResourceVersion())
	}
	return fmt.Sprintf("%s %T", ev.Type, ev.Object)
}

// expectEvents reads len(want) events from w and checks them in order. It
// returns the objects of the events.
func expectEvents(t *testing.T, w watch.Interface, want []wantEvent) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	for i, we := range want {
		ev := nextEvent(t, w)
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok || ev.Type != we.typ || u.GetName() != we.name {
			t.Fatalf("event %d: got %s; want %s (all wanted: %v)", i, describe(ev), we, want)
		}
		objs = append(objs, u)
	}
	return objs
}

// WATCH-2, WATCH-9: a watch from a list's resourceVersion sees every change
// after it exactly once, in order, and nothing before it.
func TestWatchFromResourceVersion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	ns := e.namespace(t, "watch")
	c := e.widgets(ns)
	e.create(t, widgetsGVR, widget(ns, "a", "red", 1, nil))
	l, err := c.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	// Written after the list but before the watch starts: must arrive.
	b := e.create(t, widgetsGVR, widget(ns, "b", "red", 1, nil))

	w, err := c.Watch(ctx, metav1.ListOptions{ResourceVersion: l.GetResourceVersion()})
	if err != nil {
		t.Fatalf("watch from %s: %v", l.GetResourceVersion(), err)
	}
	defer w.Stop()

	b2, err := c.Patch(ctx, "b", types.MergePatchType, []byte(`{"spec":{"color":"blue"}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("patch b: %v", err)
	}
	cObj := e.create(t, widgetsGVR, widget(ns, "c", "red", 1, nil))
	if err := c.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete a: %v", err)
	}
	// A sentinel: if it is the next event, nothing was duplicated before it.
	end := e.create(t, widgetsGVR, widget(ns, "z-end", "red", 1, nil))

	got := expectEvents(t, w, []wantEvent{
		{watch.Added, "b"}, {watch.Modified, "b"}, {watch.Added, "c"}, {watch.Deleted, "a"}, {watch.Added, "z-end"},
	})
	wantRVs := []string{b.GetResourceVersion(), b2.GetResourceVersion(), cObj.GetResourceVersion(), "", end.GetResourceVersion()}
	for i, want := range wantRVs {
		if want != "" && got[i].GetResourceVersion() != want {
			t.Errorf("event %d (%s) resourceVersion: got %s; want %s (the write's)", i, got[i].GetName(), got[i].GetResourceVersion(), want)
		}
	}
	if color := nestedString(t, got[1], "spec", "color"); color != "blue" {
		t.Errorf("MODIFIED b spec.color: got %q; want %q", color, "blue")
	}
	if got[3].GetResourceVersion() == "" || got[3].GetResourceVersion() == l.GetResourceVersion() {
		t.Errorf("DELETED a resourceVersion: got %q; want the deletion's new resourceVersion", got[3].GetResourceVersion())
	}
}

// WATCH-2: without a resourceVersion a watch starts with synthetic ADDED
// events for the current state; a single object can be watched by name.
func TestWatchStart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	ns := e.namespace(t, "start")
	other := e.namespace(t, "start-other")
	e.create(t, widgetsGVR, widget(ns, "a", "red", 1, nil))
	e.create(t, widgetsGVR, widget(ns, "b", "red", 1, nil))
	e.create(t, widgetsGVR, widget(other, "o", "red", 1, nil))

	tests := []struct {
		name   string
		ns     string
		opts   metav1.ListOptions
		change func(t *testing.T)
		// want lists the synthetic events (the first initial ones), then
		// the events of change.
		want    []wantEvent
		initial int
	}{
		{
			name: "unset resourceVersion",
			ns:   ns,
			change: func(t *testing.T) {
				e.create(t, widgetsGVR, widget(ns, "c", "red", 1, nil))
			},
			want:    []wantEvent{{watch.Added, "a"}, {watch.Added, "b"}, {watch.Added, "c"}},
			initial: 2,
		},
		{
			name: "single object by name",
			ns:   ns,
			opts: metav1.ListOptions{FieldSelector: "metadata.name=b"},
			change: func(t *testing.T) {
				if _, err := e.widgets(ns).Patch(ctx, "a", types.MergePatchType, []byte(`{"spec":{"color":"pink"}}`), metav1.PatchOptions{}); err != nil {
					t.Fatalf("patch a: %v", err)
				}
				if _, err := e.widgets(ns).Patch(ctx, "b", types.MergePatchType, []byte(`{"spec":{"color":"pink"}}`), metav1.PatchOptions{}); err != nil {
					t.Fatalf("patch b: %v", err)
				}
			},
			want:    []wantEvent{{watch.Added, "b"}, {watch.Modified, "b"}},
			initial: 1,
		},
		{
			name: "all namespaces",
			ns:   "",
			opts: metav1.ListOptions{FieldSelector: "metadata.name=o"},
			change: func(t *testing.T) {
				if err := e.widgets(other).Delete(ctx, "o", metav1.DeleteOptions{}); err != nil {
					t.Fatalf("delete o: %v", err)
				}
			},
			want:    []wantEvent{{watch.Added, "o"}, {watch.Deleted, "o"}},
			initial: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := e.dyn.Resource(widgetsGVR).Namespace(tt.ns).Watch(ctx, tt.opts)
			if err != nil {
				t.Fatalf("watch %+v: %v", tt.opts, err)
			}
			defer w.Stop()
			// Read the synthetic events before changing anything, so the
			// change is certainly after the watch's starting point.
			expectEvents(t, w, tt.want[:tt.initial])
			tt.change(t)
			expectEvents(t, w, tt.want[tt.initial:])
		})
	}
}

// WATCH-6: with a selector, an object that stops matching arrives as
// DELETED and one that starts matching as ADDED.
func TestWatchSelectorTransitions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	ns := e.namespace(t, "trans")
	c := e.widgets(ns)

	tests := []struct {
		name     string
		opts     metav1.ListOptions
		leave    string // merge patch that makes x stop matching
		rejoin   string // merge patch that makes x match again
		sentinel func() *unstructured.Unstructured
	}{
		{
			name:   "label selector",
			opts:   metav1.ListOptions{LabelSelector: "tier=a"},
			leave:  `{"metadata":{"labels":{"tier":"b"}}}`,
			rejoin: `{"metadata":{"labels":{"tier":"a"}}}`,
			sentinel: func() *unstructured.Unstructured {
				return widget(ns, "z-end-label", "red", 1, map[string]string{"tier": "a"})
			},
		},
		{
			name:     "field selector",
			opts:     metav1.ListOptions{FieldSelector: "spec.color=red"},
			leave:    `{"spec":{"color":"blue"}}`,
			rejoin:   `{"spec":{"color":"red"}}`,
			sentinel: func() *unstructured.Unstructured { return widget(ns, "z-end-field", "red", 1, nil) },
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := fmt.Sprintf("x%d", i)
			l, err := c.List(ctx, tt.opts)
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			opts := tt.opts
			opts.ResourceVersion = l.GetResourceVersion()
			w, err := c.Watch(ctx, opts)
			if err != nil {
				t.Fatalf("watch %+v: %v", opts, err)
			}
			defer w.Stop()

			e.create(t, widgetsGVR, widget(ns, x, "red", 1, map[string]string{"tier": "a"}))
			left, err := c.Patch(ctx, x, types.MergePatchType, []byte(tt.leave), metav1.PatchOptions{})
			if err != nil {
				t.Fatalf("patch %s: %v", tt.leave, err)
			}
			// Changes while not matching are not seen.
			if _, err := c.Patch(ctx, x, types.MergePatchType, []byte(`{"spec":{"replicas":7}}`), metav1.PatchOptions{}); err != nil {
				t.Fatalf("patch replicas: %v", err)
			}
			if _, err := c.Patch(ctx, x, types.MergePatchType, []byte(tt.rejoin), metav1.PatchOptions{}); err != nil {
				t.Fatalf("patch %s: %v", tt.rejoin, err)
			}
			e.create(t, widgetsGVR, widget(ns, "nomatch-"+x, "green", 1, map[string]string{"tier": "c"}))
			e.create(t, widgetsGVR, tt.sentinel())

			got := expectEvents(t, w, []wantEvent{
				{watch.Added, x}, {watch.Deleted, x}, {watch.Added, x}, {watch.Added, tt.sentinel().GetName()},
			})
			if rv := got[1].GetResourceVersion(); rv != left.GetResourceVersion() {
				t.Errorf("DELETED resourceVersion: got %s; want %s (the update that stopped matching)", rv, left.GetResourceVersion())
			}
			if replicas, _ := nestedInt(t, got[2], "spec", "replicas"); replicas != 7 {
				t.Errorf("re-ADDED spec.replicas: got %d; want 7 (the current state)", replicas)
			}
		})
	}
}

// WATCH-5: streaming lists with sendInitialEvents, and the 400s around them.
func TestWatchSendInitialEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	ns := e.namespace(t, "stream")
	c := e.widgets(ns)
	e.create(t, widgetsGVR, widget(ns, "a", "red", 1, nil))
	last := e.create(t, widgetsGVR, widget(ns, "b", "red", 1, nil))

	w, err := c.Watch(ctx, metav1.ListOptions{
		SendInitialEvents:    ptrTo(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks:  true,
	})
	if err != nil {
		t.Fatalf("watch with sendInitialEvents: %v", err)
	}
	defer w.Stop()
	expectEvents(t, w, []wantEvent{{watch.Added, "a"}, {watch.Added, "b"}})
	ev := nextEvent(t, w)
	u, ok := ev.Object.(*unstructured.Unstructured)
	if ev.Type != watch.Bookmark || !ok {
		t.Fatalf("event after the initial state: got %s; want BOOKMARK", describe(ev))
	}
	if got := u.GetAnnotations()["k8s.io/initial-events-end"]; got != "true" {
		t.Errorf("bookmark annotation k8s.io/initial-events-end: got %q; want %q", got, "true")
	}
	// kapi's resourceVersions are decimal revisions (DESIGN.md, Storage).
	bookmarkRV, err1 := strconv.ParseUint(u.GetResourceVersion(), 10, 64)
	lastRV, err2 := strconv.ParseUint(last.GetResourceVersion(), 10, 64)
	if err1 != nil || err2 != nil || bookmarkRV < lastRV {
		t.Errorf("bookmark resourceVersion: got %q; want a revision at least %s, the last write's", u.GetResourceVersion(), last.GetResourceVersion())
	}
	e.create(t, widgetsGVR, widget(ns, "c", "red", 1, nil))
	expectEvents(t, w, []wantEvent{{watch.Added, "c"}})

	bad := []struct {
		name string
		opts metav1.ListOptions
	}{
		{name: "sendInitialEvents without resourceVersionMatch", opts: metav1.ListOptions{SendInitialEvents: ptrTo(true)}},
		{name: "resourceVersionMatch without sendInitialEvents", opts: metav1.ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			w, err := c.Watch(ctx, tt.opts)
			if err == nil {
				w.Stop()
			}
			if !apierrors.IsInvalid(err) {
				t.Errorf("watch %+v: got %v; want 422 Invalid (kind ListOptions) as kube answers", tt.opts, err)
			}
		})
	}
}

// WATCH-7: timeoutSeconds ends the stream cleanly.
func TestWatchTimeoutSeconds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	w, err := e.widgets("default").Watch(ctx, metav1.ListOptions{TimeoutSeconds: ptrTo(int64(1))})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()
	select {
	case ev, ok := <-w.ResultChan():
		if ok {
			t.Errorf("watch with timeoutSeconds=1 on an empty collection: got %s; want the stream to end", describe(ev))
		}
	case <-time.After(waitTimeout):
		t.Errorf("watch with timeoutSeconds=1: still open after %v; want it ended", waitTimeout)
	}
}
