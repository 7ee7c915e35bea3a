package conformance

import (
	"context"
	"encoding/pem"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
)

// The two versions of a kubebuilder-style kind: v1 is the hub, v1beta1
// converts to and from it (spec.legs is v1's spec.size).
type tableV1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Size int64 `json:"size"`
	} `json:"spec"`
}

func (t *tableV1) DeepCopyObject() runtime.Object {
	c := *t
	t.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}
func (*tableV1) Hub() {}

type tableV1beta1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Legs int64 `json:"legs"`
	} `json:"spec"`
}

func (t *tableV1beta1) DeepCopyObject() runtime.Object {
	c := *t
	t.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

func (t *tableV1beta1) ConvertTo(h conversion.Hub) error {
	dst := h.(*tableV1)
	dst.ObjectMeta, dst.Spec.Size = t.ObjectMeta, t.Spec.Legs
	return nil
}

func (t *tableV1beta1) ConvertFrom(h conversion.Hub) error {
	src := h.(*tableV1)
	t.ObjectMeta, t.Spec.Legs = src.ObjectMeta, src.Spec.Size
	return nil
}

const tablesCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: tables.furniture.example.com}
spec:
  group: furniture.example.com
  scope: Namespaced
  names: {plural: tables, kind: Table}
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig: {url: URL, caBundle: CA}
  versions:
  - name: v1beta1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {legs: {type: integer}}}
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
`

// EXT-7: a conversion webhook written with controller-runtime's
// conversion package converts between the two versions of a CRD kapi
// serves: written at v1beta1, stored at v1, read and watched at either.
func TestControllerRuntimeConversionWebhook(t *testing.T) {
	t.Parallel()
	gv1, gvb := schema.GroupVersion{Group: "furniture.example.com", Version: "v1"}, schema.GroupVersion{Group: "furniture.example.com", Version: "v1beta1"}
	scheme := runtime.NewScheme()
	scheme.AddKnownTypeWithName(gv1.WithKind("Table"), &tableV1{})
	scheme.AddKnownTypeWithName(gvb.WithKind("Table"), &tableV1beta1{})
	hook := httptest.NewTLSServer(crconversion.NewWebhookHandler(scheme, crconversion.NewRegistry()))
	t.Cleanup(hook.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hook.Certificate().Raw})

	e := newEnv(t)
	crd := yamlObject(t, tablesCRD)
	cc := crd.Object["spec"].(map[string]any)["conversion"].(map[string]any)["webhook"].(map[string]any)["clientConfig"].(map[string]any)
	cc["url"], cc["caBundle"] = hook.URL+"/convert", ca // []byte: base64 in JSON
	ctx := context.Background()
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := e.dyn.Resource(crds).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the CRD: %v", err)
	}
	tables := func(v string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: "furniture.example.com", Version: v, Resource: "tables"}
	}
	w, err := e.dyn.Resource(tables("v1beta1")).Namespace("default").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "furniture.example.com/v1beta1", "kind": "Table",
		"metadata": map[string]any{"name": "oak"}, "spec": map[string]any{"legs": int64(4)}}}
	if _, err := e.dyn.Resource(tables("v1beta1")).Namespace("default").Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create at v1beta1: %v", err)
	}
	tests := []struct {
		version string
		field   string
	}{{"v1", "size"}, {"v1beta1", "legs"}}
	for _, tt := range tests {
		got, err := e.dyn.Resource(tables(tt.version)).Namespace("default").Get(ctx, "oak", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get at %s: %v", tt.version, err)
		}
		if v, _, _ := unstructured.NestedInt64(got.Object, "spec", tt.field); v != 4 || got.GetAPIVersion() != "furniture.example.com/"+tt.version {
			t.Errorf("get at %s: got %v; want apiVersion furniture.example.com/%s and spec.%s 4", tt.version, got.Object, tt.version, tt.field)
		}
		l, err := e.dyn.Resource(tables(tt.version)).Namespace("default").List(ctx, metav1.ListOptions{})
		if err != nil || len(l.Items) != 1 {
			t.Fatalf("list at %s: %v, %v", tt.version, err, l)
		}
		if v, _, _ := unstructured.NestedInt64(l.Items[0].Object, "spec", tt.field); v != 4 {
			t.Errorf("list at %s: got %v; want spec.%s 4", tt.version, l.Items[0].Object, tt.field)
		}
	}
	ev := <-w.ResultChan()
	if u, ok := ev.Object.(*unstructured.Unstructured); !ok || u.GetAPIVersion() != "furniture.example.com/v1beta1" {
		t.Errorf("watch at v1beta1: got %v", ev.Object)
	} else if v, _, _ := unstructured.NestedInt64(u.Object, "spec", "legs"); v != 4 {
		t.Errorf("watch at v1beta1: got %v; want spec.legs 4", u.Object)
	}
}
