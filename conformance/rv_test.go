package conformance

import (
	"errors"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RV-2, RV-3, RV-4: list and get by resourceVersion, including exact reads
// of an older state from MVCC history.
func TestResourceVersionSemantics(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	ns := e.namespace(t, "rv")
	c := e.widgets(ns)
	e.create(t, widgetsGVR, widget(ns, "a", "red", 1, nil))
	b := e.create(t, widgetsGVR, widget(ns, "b", "red", 1, nil))
	then := b.GetResourceVersion()
	e.create(t, widgetsGVR, widget(ns, "c", "red", 1, nil))
	if err := c.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete a: %v", err)
	}

	tests := []struct {
		name   string
		opts   metav1.ListOptions
		want   []string
		wantRV string // "" accepts any
	}{
		{name: "unset: most recent", opts: metav1.ListOptions{}, want: []string{"b", "c"}},
		{name: "exact older revision", opts: metav1.ListOptions{ResourceVersion: then, ResourceVersionMatch: metav1.ResourceVersionMatchExact}, want: []string{"a", "b"}, wantRV: then},
		{name: "limit with revision and no match means exact", opts: metav1.ListOptions{ResourceVersion: then, Limit: 10}, want: []string{"a", "b"}, wantRV: then},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := c.List(ctx, tt.opts)
			if err != nil {
				t.Fatalf("list %+v: %v", tt.opts, err)
			}
			if got := names(l.Items); !slices.Equal(got, tt.want) {
				t.Errorf("list %+v: got %v; want %v", tt.opts, got, tt.want)
			}
			if tt.wantRV != "" && l.GetResourceVersion() != tt.wantRV {
				t.Errorf("list %+v resourceVersion: got %s; want %s", tt.opts, l.GetResourceVersion(), tt.wantRV)
			}
		})
	}

	t.Run("any and not-older-than reads succeed", func(t *testing.T) {
		for _, opts := range []metav1.ListOptions{
			{ResourceVersion: "0"},
			{ResourceVersion: then},
			{ResourceVersion: then, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan},
		} {
			if _, err := c.List(ctx, opts); err != nil {
				t.Errorf("list %+v: %v", opts, err)
			}
		}
		if _, err := c.Get(ctx, "b", metav1.GetOptions{ResourceVersion: "0"}); err != nil {
			t.Errorf("get b at resourceVersion 0: %v", err)
		}
	})

	first, err := c.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || first.GetContinue() == "" {
		t.Fatalf("first page: got continue %q err %v; want a continue token", first.GetContinue(), err)
	}
	// As kube-apiserver: option combinations its ValidateListOptions
	// forbids are 422 Invalid (kind ListOptions); values that cannot be
	// parsed, and continue with a resourceVersion, are 400 BadRequest.
	invalid := []struct {
		name string
		opts metav1.ListOptions
		code int32
	}{
		{name: "match without resourceVersion", opts: metav1.ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, code: 422},
		{name: "exact with resourceVersion 0", opts: metav1.ListOptions{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchExact}, code: 422},
		{name: "unknown match", opts: metav1.ListOptions{ResourceVersion: then, ResourceVersionMatch: "Sometime"}, code: 422},
		{name: "continue with a resourceVersion", opts: metav1.ListOptions{Limit: 1, Continue: first.GetContinue(), ResourceVersion: then}, code: 400},
		{name: "malformed resourceVersion", opts: metav1.ListOptions{ResourceVersion: "yesterday"}, code: 400},
	}
	for _, tt := range invalid {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.List(ctx, tt.opts)
			var st apierrors.APIStatus
			if !errors.As(err, &st) || st.Status().Code != tt.code {
				t.Errorf("list %+v: got %v; want HTTP %d", tt.opts, err, tt.code)
			}
		})
	}
}

// META-5, URI-6: names, labels and annotations are validated; errors are
// 422 Invalid with a cause naming the field.
func TestMetadataValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	tests := []struct {
		name      string
		objName   string
		labels    map[string]string
		annots    map[string]string
		wantField string
	}{
		{name: "uppercase name", objName: "Bad_Name", wantField: "metadata.name"},
		{name: "name too long", objName: strings.Repeat("a", 254), wantField: "metadata.name"},
		{name: "label key with a space", objName: "ok1", labels: map[string]string{"bad key": "v"}, wantField: "metadata.labels"},
		{name: "label value too long", objName: "ok2", labels: map[string]string{"k": strings.Repeat("v", 64)}, wantField: "metadata.labels"},
		{name: "annotation key with two slashes", objName: "ok3", annots: map[string]string{"a/b/c": "v"}, wantField: "metadata.annotations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := widget("default", tt.objName, "red", 1, tt.labels)
			if tt.annots != nil {
				w.SetAnnotations(tt.annots)
			}
			_, err := e.widgets("default").Create(ctx, w, metav1.CreateOptions{})
			var st apierrors.APIStatus
			if !apierrors.IsInvalid(err) || !errors.As(err, &st) {
				t.Fatalf("create: got %v; want 422 Invalid", err)
			}
			var fields []string
			if d := st.Status().Details; d != nil {
				for _, c := range d.Causes {
					fields = append(fields, c.Field)
				}
			}
			if !slices.ContainsFunc(fields, func(f string) bool { return strings.HasPrefix(f, tt.wantField) }) {
				t.Errorf("Invalid causes: got fields %q; want one under %s", fields, tt.wantField)
			}
		})
	}
	t.Run("dotted name is a valid subdomain", func(t *testing.T) {
		if _, err := e.widgets("default").Create(ctx, widget("default", "a.b-c", "red", 1, nil), metav1.CreateOptions{}); err != nil {
			t.Errorf("create a.b-c: %v", err)
		}
	})
}
