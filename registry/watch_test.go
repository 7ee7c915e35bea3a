package registry_test

import (
	"net/http"
	"testing"
)

func TestWatchFromResourceVersion(t *testing.T) {
	s := newServer(t)
	s.must(201, "POST", widgetsPath, widget("before", nil, nil))
	rv := str(s.must(200, "GET", widgetsPath, nil), "metadata.resourceVersion")
	for _, p := range []string{widgetsPath + "?watch=true&resourceVersion=", "/apis/example.com/v1/watch/namespaces/default/widgets?resourceVersion="} {
		t.Run(p, func(t *testing.T) {
			w := s.watch(p + rv)
			name := "w" + rv
			created := s.must(201, "POST", widgetsPath, widget(name, nil, map[string]any{"color": "red"}))
			s.must(200, "PATCH", widgetsPath+"/"+name, `{"spec":{"color":"blue"}}`, "Content-Type", "application/merge-patch+json")
			s.must(200, "DELETE", widgetsPath+"/"+name, nil)
			rv = str(s.must(200, "GET", widgetsPath, nil), "metadata.resourceVersion")
			want := []string{"ADDED", "MODIFIED", "DELETED"}
			for i, typ := range want {
				ev := w.next()
				if evType(ev) != typ || str(evObj(ev), "metadata.name") != name {
					t.Fatalf("event %d: got %s %s; want %s %s", i, evType(ev), str(evObj(ev), "metadata.name"), typ, name)
				}
				if i == 0 && str(evObj(ev), "metadata.resourceVersion") != str(created, "metadata.resourceVersion") {
					t.Errorf("ADDED resourceVersion: got %s; want %s", str(evObj(ev), "metadata.resourceVersion"), str(created, "metadata.resourceVersion"))
				}
			}
		})
	}
}

func TestWatchInitialStateAndSelectors(t *testing.T) {
	s := newServer(t)
	s.must(201, "POST", widgetsPath, widget("a", map[string]string{"app": "x"}, nil))
	s.must(201, "POST", widgetsPath, widget("b", map[string]string{"app": "y"}, nil))
	w := s.watch(widgetsPath + "?watch=1&labelSelector=app%3Dx")
	if ev := w.next(); evType(ev) != "ADDED" || str(evObj(ev), "metadata.name") != "a" {
		t.Fatalf("initial: got %v; want ADDED a (synthetic, selector applied)", ev)
	}
	// b starts matching: ADDED; a stops matching: DELETED with the new rv.
	s.must(200, "PATCH", widgetsPath+"/b", `{"metadata":{"labels":{"app":"x"}}}`, "Content-Type", "application/merge-patch+json")
	if ev := w.next(); evType(ev) != "ADDED" || str(evObj(ev), "metadata.name") != "b" {
		t.Fatalf("got %v; want ADDED b", ev)
	}
	a := s.must(200, "PATCH", widgetsPath+"/a", `{"metadata":{"labels":{"app":"z"}}}`, "Content-Type", "application/merge-patch+json")
	ev := w.next()
	if evType(ev) != "DELETED" || str(evObj(ev), "metadata.name") != "a" || str(evObj(ev), "metadata.resourceVersion") != str(a, "metadata.resourceVersion") {
		t.Fatalf("got %v; want DELETED a at rv %s", ev, str(a, "metadata.resourceVersion"))
	}
	if l := path(evObj(ev), "metadata.labels.app"); l != "x" {
		t.Errorf("DELETED object labels: got app=%v; want the last matching state (x)", l)
	}
}

func TestWatchSingleObject(t *testing.T) {
	s := newServer(t)
	s.must(201, "POST", widgetsPath, widget("a", nil, nil))
	s.must(201, "POST", widgetsPath, widget("b", nil, nil))
	w := s.watch(widgetsPath + "?watch=true&fieldSelector=metadata.name%3Db")
	if ev := w.next(); str(evObj(ev), "metadata.name") != "b" {
		t.Fatalf("got %v; want b only", ev)
	}
	s.must(200, "PATCH", widgetsPath+"/a", `{"spec":{"x":1}}`, "Content-Type", "application/merge-patch+json")
	s.must(200, "PATCH", widgetsPath+"/b", `{"spec":{"x":1}}`, "Content-Type", "application/merge-patch+json")
	if ev := w.next(); evType(ev) != "MODIFIED" || str(evObj(ev), "metadata.name") != "b" {
		t.Fatalf("got %v; want MODIFIED b", ev)
	}
}

func TestWatchTooOld(t *testing.T) {
	s := newServer(t)
	s.must(201, "POST", widgetsPath, widget("a", nil, nil))
	rv := str(s.must(200, "GET", widgetsPath, nil), "metadata.resourceVersion")
	s.must(201, "POST", widgetsPath, widget("b", nil, nil))
	cur, err := s.store.Revision(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.store.Compact(t.Context(), cur); err != nil {
		t.Fatal(err)
	}
	w := s.watch(widgetsPath + "?watch=true&resourceVersion=" + rv)
	ev := w.next()
	obj := evObj(ev)
	if evType(ev) != "ERROR" || obj["kind"] != "Status" || obj["code"] != float64(410) || obj["reason"] != "Expired" {
		t.Fatalf("got %v; want one ERROR event with a 410 Expired Status", ev)
	}
	if !w.ended() {
		t.Error("stream did not end after the ERROR event")
	}
	// A list at the compacted rv is 410 too.
	if r := s.do("GET", widgetsPath+"?resourceVersion="+rv+"&resourceVersionMatch=Exact", nil); r.code != 410 {
		t.Errorf("exact list at a compacted rv: got %d; want 410", r.code)
	}
}

func TestWatchList(t *testing.T) {
	s := newServer(t)
	s.must(201, "POST", widgetsPath, widget("a", nil, nil))
	s.must(201, "POST", widgetsPath, widget("b", nil, nil))
	rv := str(s.must(200, "GET", widgetsPath, nil), "metadata.resourceVersion")
	w := s.watch(widgetsPath + "?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=")
	for _, name := range []string{"a", "b"} {
		if ev := w.next(); evType(ev) != "ADDED" || str(evObj(ev), "metadata.name") != name {
			t.Fatalf("got %v; want ADDED %s", ev, name)
		}
	}
	ev := w.next()
	ann, _ := path(evObj(ev), "metadata.annotations").(map[string]any)
	if evType(ev) != "BOOKMARK" || ann["k8s.io/initial-events-end"] != "true" || str(evObj(ev), "metadata.resourceVersion") != rv || evObj(ev)["kind"] != "Widget" {
		t.Fatalf("got %v; want the initial-events-end BOOKMARK at rv %s", ev, rv)
	}
	s.must(201, "POST", widgetsPath, widget("c", nil, nil))
	if ev := w.next(); evType(ev) != "ADDED" || str(evObj(ev), "metadata.name") != "c" {
		t.Fatalf("got %v; want ADDED c", ev)
	}
	tests := []struct{ query string }{
		{"sendInitialEvents=true"},
		{"sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=1"},
		{"resourceVersionMatch=NotOlderThan&resourceVersion=1"},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			r := s.do("GET", widgetsPath+"?watch=true&"+tc.query, nil)
			if r.code != 422 {
				t.Fatalf("got %d %s; want 422 Invalid", r.code, r.body)
			}
		})
	}
}

func TestWatchTimeoutAndBookmark(t *testing.T) {
	s := newServer(t)
	rv := str(s.must(201, "POST", widgetsPath, widget("a", nil, nil)), "metadata.resourceVersion")
	w := s.watch(widgetsPath + "?watch=true&timeoutSeconds=1&allowWatchBookmarks=true&resourceVersion=" + rv)
	ev := w.next()
	if evType(ev) != "BOOKMARK" || str(evObj(ev), "metadata.resourceVersion") != rv {
		t.Fatalf("got %v; want a BOOKMARK at %s shortly before the deadline", ev, rv)
	}
	if !w.ended() {
		t.Fatal("stream did not end at timeoutSeconds")
	}
	// Without a resourceVersion the bookmark still carries the current one.
	w = s.watch(widgetsPath + "?watch=true&timeoutSeconds=1&allowWatchBookmarks=true")
	if ev := w.next(); evType(ev) != "ADDED" {
		t.Fatalf("got %v; want the synthetic ADDED", ev)
	}
	if ev := w.next(); evType(ev) != "BOOKMARK" || str(evObj(ev), "metadata.resourceVersion") != rv {
		t.Fatalf("got %v; want a BOOKMARK at %s", ev, rv)
	}
	if r := s.do("GET", widgetsPath+"?watch=true&timeoutSeconds=x", nil); r.code != http.StatusBadRequest {
		t.Errorf("bad timeoutSeconds: got %d; want 400", r.code)
	}
}

func TestWatchFinalizerRemovalIsDelete(t *testing.T) {
	s := newServer(t)
	obj := widget("a", nil, nil)
	obj["metadata"].(map[string]any)["finalizers"] = []string{"example.com/hold"}
	s.must(201, "POST", widgetsPath, obj)
	s.must(200, "DELETE", widgetsPath+"/a", nil)
	rv := str(s.must(200, "GET", widgetsPath, nil), "metadata.resourceVersion")
	w := s.watch(widgetsPath + "?watch=true&resourceVersion=" + rv)
	got := s.must(200, "PATCH", widgetsPath+"/a", `{"metadata":{"finalizers":null}}`, "Content-Type", "application/merge-patch+json")
	if got["metadata"].(map[string]any)["finalizers"] != nil {
		t.Errorf("response: got finalizers %v; want none", path(got, "metadata.finalizers"))
	}
	if ev := w.next(); evType(ev) != "DELETED" || str(evObj(ev), "metadata.name") != "a" {
		t.Fatalf("got %s; want DELETED a (no MODIFIED for the emptied finalizers, as kube)", evType(ev))
	}
}
