package registry_test

import (
	"errors"
	"testing"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/watch"
)

// Widget is how a Go program might model the resource itself.
type Widget struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Metadata   struct {
		Name            string            `json:"name,omitempty"`
		Namespace       string            `json:"namespace,omitempty"`
		UID             string            `json:"uid,omitempty"`
		ResourceVersion string            `json:"resourceVersion,omitempty"`
		Generation      int64             `json:"generation,omitempty"`
		Labels          map[string]string `json:"labels,omitempty"`
	} `json:"metadata"`
	Spec struct {
		Color    string `json:"color,omitempty"`
		Replicas int    `json:"replicas,omitempty"`
	} `json:"spec"`
	Status struct {
		ReadyReplicas int `json:"readyReplicas,omitempty"`
	} `json:"status"`
}

func TestClient(t *testing.T) {
	s := newServer(t)
	ctx := t.Context()
	c, err := registry.NewClient[Widget](s.reg, "example.com/v1", "widgets")
	if err != nil {
		t.Fatal(err)
	}
	events, err := c.Watch(ctx, "default", registry.ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	var w Widget
	w.Metadata.Name = "go"
	w.Spec.Color = "red"
	created, err := c.Create(ctx, "default", &w)
	if err != nil {
		t.Fatal(err)
	}
	if created.Metadata.UID == "" || created.Metadata.ResourceVersion == "" || created.Metadata.Generation != 1 || created.Kind != "Widget" {
		t.Errorf("create: got %+v; want server fields set", created)
	}
	// The HTTP API sees what Go wrote, and the other way round.
	if got := s.must(200, "GET", widgetsPath+"/go", nil); str(got, "spec.color") != "red" {
		t.Errorf("over HTTP: got %v", got)
	}
	s.must(200, "PATCH", widgetsPath+"/go", `{"spec":{"color":"blue"}}`, "Content-Type", "application/merge-patch+json")
	got, err := c.Get(ctx, "default", "go")
	if err != nil || got.Spec.Color != "blue" || got.Metadata.Generation != 2 {
		t.Fatalf("get: got %+v, %v; want blue at generation 2", got, err)
	}
	// Same conflict semantics as HTTP.
	if _, err := c.Update(ctx, "default", created); registry.ReasonOf(err) != "Conflict" {
		t.Errorf("stale update: got %v; want Conflict", err)
	}
	got.Status.ReadyReplicas = 3
	got.Spec.Color = "ignored"
	st, err := c.UpdateStatus(ctx, "default", got)
	if err != nil || st.Status.ReadyReplicas != 3 || st.Spec.Color != "blue" {
		t.Errorf("update status: got %+v, %v", st, err)
	}
	l, err := c.List(ctx, "", registry.ListOptions{FieldSelector: "spec.color=blue"})
	if err != nil || len(l.Items) != 1 || l.Items[0].Metadata.Name != "go" || l.ResourceVersion == "" {
		t.Errorf("list: got %+v, %v", l, err)
	}
	if _, err := c.List(ctx, "", registry.ListOptions{LabelSelector: "a in ("}); registry.ReasonOf(err) != "BadRequest" {
		t.Errorf("bad selector: got %v; want BadRequest", err)
	}
	if err := c.Delete(ctx, "default", "go"); err != nil {
		t.Fatal(err)
	}
	var se *registry.StatusError
	if _, err := c.Get(ctx, "default", "go"); !errors.As(err, &se) || se.Code() != 404 {
		t.Errorf("get after delete: got %v; want a 404 StatusError", err)
	}
	want := []watch.EventType{watch.Added, watch.Modified, watch.Modified, watch.Deleted}
	for i, typ := range want {
		ev := <-events
		if ev.Type != typ || ev.Object == nil || ev.Object.Metadata.Name != "go" {
			t.Fatalf("event %d: got %+v; want %s go", i, ev, typ)
		}
	}
	if _, err := registry.NewClient[Widget](s.reg, "example.com/v1", "gadgets"); err == nil {
		t.Error("client for an unknown resource: got no error")
	}
}

// gadget is the Go form of gadgets (fields_test.go).
type gadget struct {
	Metadata struct {
		Name            string `json:"name"`
		ResourceVersion string `json:"resourceVersion,omitempty"`
	} `json:"metadata"`
	Spec struct {
		Size  int    `json:"size"`
		Color string `json:"color,omitempty"`
	} `json:"spec"`
}

// TestClientWatchShared checks the decode-once rule for in-process
// watchers: every watcher of a Client type gets the same *T for an object
// version (with the schema's defaults, as any read), while Get hands out
// the caller's own copy; a change to that copy reaches no watcher.
func TestClientWatchShared(t *testing.T) {
	s := newServer(t, gadgets(t))
	ctx := t.Context()
	c, err := registry.NewClient[gadget](s.reg, "example.com/v1", "gadgets")
	if err != nil {
		t.Fatal(err)
	}
	c2, _ := registry.NewClient[gadget](s.reg, "example.com/v1", "gadgets")
	other, _ := registry.NewClient[Widget](s.reg, "example.com/v1", "gadgets") // another Go type: its own objects
	var streams []<-chan registry.Event[gadget]
	for _, cl := range []*registry.Client[gadget]{c, c, c2} {
		ch, err := cl.Watch(ctx, "default", registry.ListOptions{ResourceVersion: "1"})
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, ch)
	}
	otherCh, err := other.Watch(ctx, "default", registry.ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	var g gadget
	g.Metadata.Name = "g"
	g.Spec.Size = 2
	if _, err := c.Create(ctx, "default", &g); err != nil {
		t.Fatal(err)
	}
	var first *gadget
	for i, ch := range streams {
		ev := <-ch
		if ev.Type != watch.Added || ev.Object == nil {
			t.Fatalf("watcher %d: got %+v; want ADDED with an object", i, ev)
		}
		if ev.Object.Spec.Color != "red" || ev.Object.Metadata.ResourceVersion != ev.ResourceVersion {
			t.Errorf("watcher %d: object %+v at %s; want the default color and the event's resourceVersion", i, ev.Object, ev.ResourceVersion)
		}
		if first == nil {
			first = ev.Object
		} else if ev.Object != first {
			t.Errorf("watcher %d: a new *gadget; want the one every watcher shares", i)
		}
	}
	if ev := <-otherCh; ev.Object == nil {
		t.Errorf("Widget watcher: %+v; want an object", ev)
	}
	mine, err := c.Get(ctx, "default", "g")
	if err != nil {
		t.Fatal(err)
	}
	if mine == first {
		t.Fatal("Get returned the shared watch object; want the caller's own")
	}
	mine.Spec.Color = "blue" // the caller's copy: nobody else sees it
	late, err := c.Watch(ctx, "default", registry.ListOptions{ResourceVersion: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if ev := <-late; ev.Object != first || ev.Object.Spec.Color != "red" {
		t.Errorf("a later watcher got %+v (shared: %v); want the shared, unchanged object", ev.Object, ev.Object == first)
	}
}

// TestClientMatchesNamesExactly: a Client decodes as Kubernetes clients
// do, matching JSON names to field tags case-sensitively, where
// encoding/json would fill a field tagged "DATA" from "data".
func TestClientMatchesNamesExactly(t *testing.T) {
	s := newServer(t)
	if r := s.do("POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"cm"},"data":{"a":"b"}}`); r.code != 201 {
		t.Fatalf("create: %d %s", r.code, r.body)
	}
	type exact struct {
		Data map[string]string `json:"data"`
	}
	type other struct {
		Data map[string]string `json:"DATA"`
	}
	ce, err := registry.NewClient[exact](s.reg, "v1", "configmaps")
	if err != nil {
		t.Fatal(err)
	}
	co, err := registry.NewClient[other](s.reg, "v1", "configmaps")
	if err != nil {
		t.Fatal(err)
	}
	e, err := ce.Get(t.Context(), "default", "cm")
	if err != nil {
		t.Fatal(err)
	}
	if e.Data["a"] != "b" {
		t.Errorf(`tag "data": got %v; want map[a:b]`, e.Data)
	}
	o, err := co.Get(t.Context(), "default", "cm")
	if err != nil {
		t.Fatal(err)
	}
	if o.Data != nil {
		t.Errorf(`tag "DATA" from "data": got %v; want nil (names match exactly)`, o.Data)
	}
}
