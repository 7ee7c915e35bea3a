package conformance

import (
	"context"
	"slices"
	"strings"
	"testing"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/discovery"
	kubeproto "k8s.io/kube-openapi/pkg/util/proto"
	"k8s.io/kubectl/pkg/util/openapi"

	"github.com/kapi-dev/kapi/cel"
	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/registry"
	kschema "github.com/kapi-dev/kapi/schema"
)

var configMapGVK = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

// openAPIV2 fetches /openapi/v2 through client-go's discovery (protobuf)
// and kubectl's reading of it.
func openAPIV2(t *testing.T, e *env) (*openapi_v2.Document, openapi.Resources) {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(e.config())
	if err != nil {
		t.Fatal(err)
	}
	doc, err := dc.OpenAPISchema()
	if err != nil {
		t.Fatalf("OpenAPISchema: %v", err)
	}
	res, err := openapi.NewOpenAPIData(doc)
	if err != nil {
		t.Fatalf("kubectl cannot read the OpenAPI v2 document: %v", err)
	}
	return doc, res
}

// URI-8: client-go's OpenAPISchema decodes the protobuf form, kubectl's
// reading of it finds every served kind, and the JSON form is the same
// document.
func TestOpenAPIV2(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	doc, res := openAPIV2(t, e)

	for _, gvk := range []schema.GroupVersionKind{widgetGVK, configMapGVK, {Version: "v1", Kind: "Namespace"}, {Group: "example.com", Version: "v1", Kind: "WidgetList"}} {
		if res.LookupResource(gvk) == nil {
			t.Errorf("LookupResource(%v): got nil; want its schema", gvk)
		}
	}
	kind, ok := res.LookupResource(widgetGVK).(*kubeproto.Kind)
	if !ok {
		t.Fatalf("Widget: got %T; want a kind with fields", res.LookupResource(widgetGVK))
	}
	if !slices.Contains(kind.Keys(), "spec") || !slices.Contains(kind.Keys(), "metadata") {
		t.Errorf("Widget fields: got %v; want spec and metadata", kind.Keys())
	}

	t.Run("JSON and protobuf agree", func(t *testing.T) {
		dc, err := discovery.NewDiscoveryClientForConfig(e.config())
		if err != nil {
			t.Fatal(err)
		}
		j, err := dc.RESTClient().Get().AbsPath("/openapi/v2").SetHeader("Accept", "application/json").Do(context.Background()).Raw()
		if err != nil {
			t.Fatalf("GET /openapi/v2 as JSON: %v", err)
		}
		fromJSON, err := openapi_v2.ParseDocument(j)
		if err != nil {
			t.Fatalf("gnostic cannot parse the JSON form: %v", err)
		}
		if !proto.Equal(fromJSON, doc) {
			t.Errorf("the JSON form parsed by gnostic differs from the protobuf form")
		}
	})

	t.Run("patch types", func(t *testing.T) {
		// kubectl apply (client-side) asks which patch types PATCH takes:
		// strategic merge for ConfigMap, whose schema has kube's patch
		// strategies, merge patch for widgets, as kube's custom resources.
		if got := res.GetConsumes(configMapGVK, "PATCH"); !slices.Contains(got, "application/strategic-merge-patch+json") {
			t.Errorf("ConfigMap PATCH consumes %v; want strategic merge", got)
		}
		got := res.GetConsumes(widgetGVK, "PATCH")
		if !slices.Contains(got, "application/merge-patch+json") || slices.Contains(got, "application/strategic-merge-patch+json") {
			t.Errorf("Widget PATCH consumes %v; want merge patch and not strategic merge", got)
		}
	})

	t.Run("patch meta", func(t *testing.T) {
		// apply's patch-meta lookups read ObjectMeta's merge keys.
		meta := strategicpatch.PatchMetaFromOpenAPI{Schema: res.LookupResource(configMapGVK)}
		m, _, err := meta.LookupPatchMetadataForStruct("metadata")
		if err != nil {
			t.Fatalf("LookupPatchMetadataForStruct(metadata): %v", err)
		}
		_, pm, err := m.LookupPatchMetadataForSlice("ownerReferences")
		if err != nil {
			t.Fatalf("LookupPatchMetadataForSlice(ownerReferences): %v", err)
		}
		if pm.GetPatchMergeKey() != "uid" || !slices.Contains(pm.GetPatchStrategies(), "merge") {
			t.Errorf("ownerReferences: got merge key %q, strategies %v; want uid, merge", pm.GetPatchMergeKey(), pm.GetPatchStrategies())
		}
	})

	t.Run("fieldValidation", func(t *testing.T) {
		// kubectl's fallback check that the server validates fields
		// itself reads the PATCH parameters of OpenAPI v2.
		dc, err := discovery.NewDiscoveryClientForConfig(e.config())
		if err != nil {
			t.Fatal(err)
		}
		v := resource.NewQueryParamVerifier(e.dyn, dc, resource.QueryParamFieldValidation)
		for _, gvk := range []schema.GroupVersionKind{widgetGVK, configMapGVK} {
			if err := v.HasSupport(gvk); err != nil {
				t.Errorf("HasSupport(%v, fieldValidation): %v", gvk, err)
			}
		}
	})
}

// URI-8: `kubectl explain --output=plaintext-openapiv2` reads the widgets'
// fields from /openapi/v2.
func TestKubectlExplainOpenAPIV2(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := newKubectl(t, e)
	tests := []struct {
		field string
		want  []string
	}{
		{"widgets.spec.ports", []string{"KIND:", "Widget", "VERSION:", "example.com/v1", "RESOURCE: ports <[]Object>", "Ports the widget listens on", "port\t<integer> -required-", "protocol\t<string> -required-", "name\t<string>"}},
		{"widgets.spec", []string{"What the widget should be.", "color\t<string>", "The widget's color.", "replicas\t<integer>", "ports\t<[]Object>"}},
		{"widgets.metadata.ownerReferences", []string{"RESOURCE: ownerReferences <[]Object>", "uid\t<string> -required-"}},
		{"configmaps", []string{"KIND:", "ConfigMap", "data\t<map[string]string>", "metadata\t<Object>"}},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			out := k.mustRun(t, "explain", "--output=plaintext-openapiv2", tt.field)
			for _, want := range tt.want {
				if !strings.Contains(out, want) {
					t.Errorf("explain --output=plaintext-openapiv2 %s: want %q in output:\n%s", tt.field, want, out)
				}
			}
		})
	}
}

// URI-8: the kubebuilder CronJob CRD (nullable fields, int-or-string,
// embedded resources, unknown fields kept) converts to a v2 document
// kubectl can read, as kube converts a CRD's structural schema.
func TestOpenAPIV2CronJobCRD(t *testing.T) {
	t.Parallel()
	crds, err := kschema.LoadCRDs("../schema/testdata/crds")
	if err != nil {
		t.Fatalf("LoadCRDs: %v", err)
	}
	reg, err := server.New(withStorage(t, server.Options{Registry: registry.Options{CEL: cel.Compile}, CRDs: crds}))
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	e := newEnvFor(t, reg)
	_, res := openAPIV2(t, e)
	gvk := schema.GroupVersionKind{Group: "batch.tutorial.kubebuilder.io", Version: "v1", Kind: "CronJob"}
	if res.LookupResource(gvk) == nil {
		t.Fatalf("LookupResource(%v): got nil", gvk)
	}
	k := newKubectl(t, e)
	out := k.mustRun(t, "explain", "--output=plaintext-openapiv2", "cronjobs.spec.jobTemplate.spec.template.spec.containers")
	if !strings.Contains(out, "image\t<string>") {
		t.Errorf("explain cronjobs...containers: want image in output:\n%s", out)
	}
}
