package conformance

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/tools/cache"
)

// nextHandlerEvent returns the next informer event, failing after
// waitTimeout.
func nextHandlerEvent(t *testing.T, events <-chan string) string {
	t.Helper()
	select {
	case ev := <-events:
		return ev
	case <-time.After(waitTimeout):
		t.Fatalf("no informer event within %v", waitTimeout)
	}
	return ""
}

// eventRecorder returns handler funcs that send "add|update|delete NAME"
// (update with the new spec.color) to the returned channel.
func eventRecorder() (cache.ResourceEventHandlerFuncs, <-chan string) {
	events := make(chan string, 100)
	name := func(obj any) string {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if u, ok := obj.(*unstructured.Unstructured); ok {
			return u.GetName()
		}
		return fmt.Sprintf("%T", obj)
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { events <- "add " + name(obj) },
		UpdateFunc: func(_, obj any) {
			color, _, _ := unstructured.NestedString(obj.(*unstructured.Unstructured).Object, "spec", "color")
			events <- "update " + name(obj) + " " + color
		},
		DeleteFunc: func(obj any) { events <- "delete " + name(obj) },
	}, events
}

// A dynamic shared informer syncs and sees create, update and delete, with
// the WatchList client feature off (list, then watch) and on (one
// streaming watch with sendInitialEvents).
func TestSharedInformer(t *testing.T) {
	// Not parallel: the client-go feature gate is process-wide.
	tests := []struct {
		name      string
		watchList bool
	}{
		{name: "list then watch", watchList: false},
		{name: "watch list", watchList: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, tt.watchList)
			e := newEnv(t)
			ns := e.namespace(t, "inf")
			e.create(t, widgetsGVR, widget(ns, "pre1", "red", 1, nil))
			e.create(t, widgetsGVR, widget(ns, "pre2", "red", 1, nil))

			cfg := e.config()
			log := recordClientRequests(cfg)
			dyn, err := dynamic.NewForConfig(cfg)
			if err != nil {
				t.Fatalf("dynamic.NewForConfig: %v", err)
			}
			factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, ns, nil)
			inf := factory.ForResource(widgetsGVR).Informer()
			handler, events := eventRecorder()
			if _, err := inf.AddEventHandler(handler); err != nil {
				t.Fatalf("AddEventHandler: %v", err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer factory.Shutdown()
			defer cancel()
			factory.Start(ctx.Done())

			syncCtx, syncCancel := context.WithTimeout(ctx, waitTimeout)
			defer syncCancel()
			if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
				t.Fatalf("informer did not sync within %v (requests: %v)", waitTimeout, log.all())
			}
			keys := inf.GetStore().ListKeys()
			slices.Sort(keys)
			if want := []string{ns + "/pre1", ns + "/pre2"}; !slices.Equal(keys, want) {
				t.Errorf("synced store keys: got %v; want %v", keys, want)
			}
			initial := []string{nextHandlerEvent(t, events), nextHandlerEvent(t, events)}
			slices.Sort(initial)
			if want := []string{"add pre1", "add pre2"}; !slices.Equal(initial, want) {
				t.Errorf("initial events: got %v; want %v", initial, want)
			}

			wc := e.widgets(ns)
			actx := testContext(t)
			e.create(t, widgetsGVR, widget(ns, "new", "red", 1, nil))
			if _, err := wc.Patch(actx, "new", types.MergePatchType, []byte(`{"spec":{"color":"blue"}}`), metav1.PatchOptions{}); err != nil {
				t.Fatalf("patch: %v", err)
			}
			if err := wc.Delete(actx, "pre1", metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			for _, want := range []string{"add new", "update new blue", "delete pre1"} {
				if got := nextHandlerEvent(t, events); got != want {
					t.Fatalf("informer event: got %q; want %q", got, want)
				}
			}
			keys = inf.GetStore().ListKeys()
			slices.Sort(keys)
			if want := []string{ns + "/new", ns + "/pre2"}; !slices.Equal(keys, want) {
				t.Errorf("store keys after changes: got %v; want %v", keys, want)
			}

			checkInformerRequests(t, log, "/apis/example.com/v1/namespaces/"+ns+"/widgets", tt.watchList)
		})
	}
}

// checkInformerRequests verifies from the client side which protocol the
// reflector really used on path.
func checkInformerRequests(t *testing.T, log *requestLog, path string, watchList bool) {
	t.Helper()
	var lists, watches, streams []request
	for _, r := range log.all() {
		if r.Path != path {
			continue
		}
		q, err := url.ParseQuery(r.Query)
		if err != nil {
			t.Fatalf("request %v: bad query: %v", r, err)
		}
		switch {
		case q.Get("watch") != "true":
			lists = append(lists, r)
		case q.Get("sendInitialEvents") == "true":
			if q.Get("resourceVersionMatch") != "NotOlderThan" || q.Get("allowWatchBookmarks") != "true" {
				t.Errorf("streaming watch request %v: want resourceVersionMatch=NotOlderThan and allowWatchBookmarks=true", r)
			}
			streams = append(streams, r)
		default:
			watches = append(watches, r)
		}
	}
	all := log.all()
	if watchList {
		if len(streams) == 0 || streams[0].Status != 200 {
			t.Errorf("watch requests with sendInitialEvents=true: got %v; want one answered 200 (all requests: %v)", streams, all)
		}
		if len(lists) != 0 {
			t.Errorf("list requests: got %v; want none (the reflector fell back from WatchList to list)", lists)
		}
		return
	}
	if len(lists) == 0 || lists[0].Status != 200 {
		t.Errorf("list requests: got %v; want one answered 200 (all requests: %v)", lists, all)
	}
	if len(watches) == 0 || len(streams) != 0 {
		t.Errorf("watch requests: got plain %v and streaming %v; want plain ones only", watches, streams)
	}
}
