package conformance

import (
	"fmt"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LIST-2, LIST-5: limit and continue over one consistent snapshot.
func TestPagination(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	ns := e.namespace(t, "pages")
	c := e.widgets(ns)
	var want []string
	for i := range 7 {
		name := fmt.Sprintf("w%d", i)
		e.create(t, widgetsGVR, widget(ns, name, "red", 1, nil))
		want = append(want, name)
	}

	var (
		got     []string
		firstRV string
		token   string
		pages   int
	)
	// remaining is what each page's remainingItemCount must say.
	remaining := []int64{5, 3, 1}
	for {
		l, err := c.List(ctx, metav1.ListOptions{Limit: 2, Continue: token})
		if err != nil {
			t.Fatalf("list page %d: %v", pages+1, err)
		}
		pages++
		if pages == 1 {
			firstRV = l.GetResourceVersion()
			// Written after the first page: must not show up in later pages.
			e.create(t, widgetsGVR, widget(ns, "w3-late", "red", 1, nil))
			e.create(t, widgetsGVR, widget(ns, "w9-late", "red", 1, nil))
			if err := c.Delete(ctx, "w6", metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete w6: %v", err)
			}
		}
		if rv := l.GetResourceVersion(); rv != firstRV {
			t.Errorf("page %d resourceVersion: got %s; want the first page's %s", pages, rv, firstRV)
		}
		got = append(got, names(l.Items)...)
		token = l.GetContinue()
		if pages <= len(remaining) {
			rc := l.GetRemainingItemCount()
			if rc == nil || *rc != remaining[pages-1] {
				t.Errorf("page %d remainingItemCount: got %v; want %d", pages, derefOrNil(rc), remaining[pages-1])
			}
			if len(l.Items) != 2 {
				t.Errorf("page %d: got %d items; want 2", pages, len(l.Items))
			}
		}
		if token == "" {
			if rc := l.GetRemainingItemCount(); rc != nil && *rc != 0 {
				t.Errorf("last page remainingItemCount: got %d; want unset", *rc)
			}
			break
		}
		if pages > 10 {
			t.Fatalf("pagination did not end after %d pages (items so far %v)", pages, got)
		}
	}
	if pages != 4 {
		t.Errorf("pages: got %d; want 4", pages)
	}
	if !slices.Equal(got, want) {
		t.Errorf("paginated items: got %v; want %v (the snapshot of the first page, in name order)", got, want)
	}

	t.Run("bad continue token", func(t *testing.T) {
		_, err := c.List(ctx, metav1.ListOptions{Limit: 2, Continue: "not-a-token"})
		if !apierrors.IsBadRequest(err) {
			t.Errorf("list with a bad continue token: got %v; want BadRequest", err)
		}
	})
}

func derefOrNil(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// LIST-3, LIST-4: label and field selectors on list.
func TestSelectors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	ns := e.namespace(t, "sel")
	other := e.namespace(t, "other")
	e.create(t, widgetsGVR, widget(ns, "a", "red", 1, map[string]string{"tier": "front", "env": "prod"}))
	e.create(t, widgetsGVR, widget(ns, "b", "blue", 1, map[string]string{"tier": "back", "env": "prod"}))
	e.create(t, widgetsGVR, widget(ns, "c", "red", 1, map[string]string{"tier": "back"}))
	e.create(t, widgetsGVR, widget(ns, "d", "green", 1, nil))
	e.create(t, widgetsGVR, widget(other, "e", "red", 1, map[string]string{"tier": "front"}))

	tests := []struct {
		name   string
		ns     string // "" lists across all namespaces
		labels string
		fields string
		want   []string
	}{
		{name: "no selector", ns: ns, want: []string{"a", "b", "c", "d"}},
		{name: "label equals", ns: ns, labels: "tier=front", want: []string{"a"}},
		{name: "label double equals", ns: ns, labels: "tier==back", want: []string{"b", "c"}},
		{name: "label not equals", ns: ns, labels: "tier!=back", want: []string{"a", "d"}},
		{name: "label in", ns: ns, labels: "tier in (front,back)", want: []string{"a", "b", "c"}},
		{name: "label notin", ns: ns, labels: "tier notin (front)", want: []string{"b", "c", "d"}},
		{name: "label exists", ns: ns, labels: "env", want: []string{"a", "b"}},
		{name: "label not exists", ns: ns, labels: "!env", want: []string{"c", "d"}},
		{name: "label and", ns: ns, labels: "tier=back,env=prod", want: []string{"b"}},
		{name: "field metadata.name", ns: ns, fields: "metadata.name=c", want: []string{"c"}},
		{name: "field metadata.name not equals", ns: ns, fields: "metadata.name!=c", want: []string{"a", "b", "d"}},
		{name: "field spec.color", ns: ns, fields: "spec.color=red", want: []string{"a", "c"}},
		{name: "field spec.color double equals", ns: ns, fields: "spec.color==green", want: []string{"d"}},
		{name: "field metadata.namespace all namespaces", fields: "metadata.namespace=" + other, want: []string{"e"}},
		{name: "field and label all namespaces", labels: "tier=front", fields: "spec.color=red", want: []string{"e", "a"}}, // namespace "other" < "sel"
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := e.dyn.Resource(widgetsGVR).Namespace(tt.ns)
			l, err := c.List(ctx, metav1.ListOptions{LabelSelector: tt.labels, FieldSelector: tt.fields})
			if err != nil {
				t.Fatalf("list labels=%q fields=%q: %v", tt.labels, tt.fields, err)
			}
			if got := names(l.Items); !slices.Equal(got, tt.want) {
				t.Errorf("list labels=%q fields=%q: got %v; want %v", tt.labels, tt.fields, got, tt.want)
			}
		})
	}

	bad := []struct {
		name, labels, fields string
		resource             string
	}{
		{name: "unknown field", resource: "widgets", fields: "spec.size=3"},
		{name: "widget field on configmaps", resource: "configmaps", fields: "spec.color=red"},
		{name: "invalid label selector", resource: "widgets", labels: "tier in (front"},
		{name: "invalid field operator", resource: "widgets", fields: "spec.color in (red)"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			gvr := widgetsGVR
			if tt.resource == "configmaps" {
				gvr = configMapsGVR
			}
			_, err := e.dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: tt.labels, FieldSelector: tt.fields})
			if !apierrors.IsBadRequest(err) {
				t.Errorf("list %s labels=%q fields=%q: got %v; want BadRequest", tt.resource, tt.labels, tt.fields, err)
			}
		})
	}
}

// VERB-4: deletecollection honours the label selector and the namespace.
func TestDeleteCollection(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	ns := e.namespace(t, "dc")
	other := e.namespace(t, "dc-other")
	for _, name := range []string{"a1", "a2", "a3"} {
		e.create(t, widgetsGVR, widget(ns, name, "red", 1, map[string]string{"batch": "a"}))
		e.create(t, configMapsGVR, configMap(ns, name, map[string]string{"batch": "a"}))
	}
	e.create(t, widgetsGVR, widget(ns, "b1", "red", 1, map[string]string{"batch": "b"}))
	e.create(t, widgetsGVR, widget(other, "a9", "red", 1, map[string]string{"batch": "a"}))
	e.create(t, configMapsGVR, configMap(ns, "b1", map[string]string{"batch": "b"}))

	tests := []struct {
		name     string
		deleteIn func() error
		listNS   string
		want     []string
	}{
		{
			name: "widgets",
			deleteIn: func() error {
				return e.widgets(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "batch=a"})
			},
			listNS: "",
			// Key order: "dc-other/" sorts before "dc/" ('-' < '/').
			want: []string{"a9", "b1"},
		},
		{
			name: "configmaps",
			deleteIn: func() error {
				return e.configMaps(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "batch=a"})
			},
			listNS: ns,
			want:   []string{"b1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.deleteIn(); err != nil {
				t.Fatalf("deletecollection batch=a in %s: %v", ns, err)
			}
			gvr := widgetsGVR
			if tt.name == "configmaps" {
				gvr = configMapsGVR
			}
			l, err := e.dyn.Resource(gvr).Namespace(tt.listNS).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			// All-namespaces lists come in storage key order.
			if got := names(l.Items); !slices.Equal(got, tt.want) {
				t.Errorf("remaining %s: got %v; want %v", tt.name, got, tt.want)
			}
		})
	}
}
