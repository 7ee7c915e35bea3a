package conformance

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/openapi3"
)

// URI-8 (in part): client-go's OpenAPI v3 root finds every served group
// version and the Widget schema with its group-version-kind.
func TestOpenAPIV3(t *testing.T) {
	e := newEnv(t)
	dc, err := discovery.NewDiscoveryClientForConfig(e.config())
	if err != nil {
		t.Fatal(err)
	}
	root := openapi3.NewRoot(dc.OpenAPIV3())
	gvs, err := root.GroupVersions()
	if err != nil {
		t.Fatalf("GroupVersions: %v", err)
	}
	want := map[schema.GroupVersion]bool{{Version: "v1"}: false, {Group: "example.com", Version: "v1"}: false}
	for _, gv := range gvs {
		if _, ok := want[gv]; ok {
			want[gv] = true
		}
	}
	for gv, seen := range want {
		if !seen {
			t.Errorf("OpenAPI v3 index: got %v; want %v in it", gvs, gv)
		}
	}
	spec, err := root.GVSpec(schema.GroupVersion{Group: "example.com", Version: "v1"})
	if err != nil {
		t.Fatalf("GVSpec(example.com/v1): %v", err)
	}
	s, ok := spec.Components.Schemas["com.example.v1.Widget"]
	if !ok {
		t.Fatalf("schemas: got %d; want com.example.v1.Widget", len(spec.Components.Schemas))
	}
	if _, ok := s.Properties["spec"]; !ok {
		t.Errorf("Widget schema: got properties %v; want spec", s.Properties)
	}
	var gvks []map[string]string
	if err := s.Extensions.GetObject("x-kubernetes-group-version-kind", &gvks); err != nil || len(gvks) != 1 || gvks[0]["kind"] != "Widget" {
		t.Errorf("Widget x-kubernetes-group-version-kind: got %v, %v", gvks, err)
	}
}

// META-6: the default namespace exists and may not be deleted (as kube).
func TestDefaultNamespaceIsKept(t *testing.T) {
	e := newEnv(t)
	ctx := testContext(t)
	cs, err := kubernetes.NewForConfig(e.config())
	if err != nil {
		t.Fatal(err)
	}
	err = cs.CoreV1().Namespaces().Delete(ctx, "default", metav1.DeleteOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("delete namespace default: got %v; want 403 Forbidden", err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Errorf("get default after the refused delete: %v", err)
	}
}
