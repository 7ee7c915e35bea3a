package conformance

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	crconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
)

// matchPolicy Equivalent through a real conversion: a CRD with two
// versions, v1beta1's spec.legs being v1's spec.size (converted by a
// controller-runtime conversion webhook), and admission webhooks
// registered for v1 only. A write at v1beta1 reaches them as kube sends
// it: as a v1 object (spec.size), their matchConditions evaluated on it,
// the mutating webhook's JSON patch applied at v1 and converted back to
// v1beta1; a webhook with matchPolicy Exact is not called. The same
// scenario runs on kube-apiserver and kapi; their answers must be the
// same, and kube's what the scenario expects.

// chairV1 and chairV1beta1 are the two versions (v1 the hub).
type chairV1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Size int64 `json:"size"`
	} `json:"spec"`
}

func (c *chairV1) DeepCopyObject() runtime.Object {
	o := *c
	c.ObjectMeta.DeepCopyInto(&o.ObjectMeta)
	return &o
}
func (*chairV1) Hub() {}

type chairV1beta1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Legs int64 `json:"legs"`
	} `json:"spec"`
}

func (c *chairV1beta1) DeepCopyObject() runtime.Object {
	o := *c
	c.ObjectMeta.DeepCopyInto(&o.ObjectMeta)
	return &o
}

func (c *chairV1beta1) ConvertTo(h conversion.Hub) error {
	dst := h.(*chairV1)
	dst.ObjectMeta, dst.Spec.Size = c.ObjectMeta, c.Spec.Legs
	return nil
}

func (c *chairV1beta1) ConvertFrom(h conversion.Hub) error {
	src := h.(*chairV1)
	c.ObjectMeta, c.Spec.Legs = src.ObjectMeta, src.Spec.Size
	return nil
}

// chairHooks serves /convert (the conversion webhook), /grow (a mutating
// webhook adding 1 to spec.size of a chair smaller than 10 and noting
// what it was sent), /deny (a validating webhook denying with what it was
// sent) and /exact (denies everything: it must not be called).
func chairHooks(t *testing.T, gv1, gvb schema.GroupVersion) (string, []byte) {
	scheme := runtime.NewScheme()
	scheme.AddKnownTypeWithName(gv1.WithKind("Chair"), &chairV1{})
	scheme.AddKnownTypeWithName(gvb.WithKind("Chair"), &chairV1beta1{})
	mux := http.NewServeMux()
	mux.Handle("/convert", crconversion.NewWebhookHandler(scheme, crconversion.NewRegistry()))
	review := func(answer func(req *admissionv1.AdmissionRequest, obj map[string]any) admissionv1.AdmissionResponse) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			var rev admissionv1.AdmissionReview
			if err := json.NewDecoder(r.Body).Decode(&rev); err != nil || rev.Request == nil {
				http.Error(w, fmt.Sprint(err), http.StatusBadRequest)
				return
			}
			var obj map[string]any
			_ = json.Unmarshal(rev.Request.Object.Raw, &obj)
			resp := answer(rev.Request, obj)
			resp.UID = rev.Request.UID
			rev.Response, rev.Request = &resp, nil
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(rev)
		}
	}
	seen := func(req *admissionv1.AdmissionRequest, obj map[string]any) string {
		spec, _ := obj["spec"].(map[string]any)
		return fmt.Sprintf("kind=%s/%s/%s apiVersion=%v spec=%v", req.Kind.Group, req.Kind.Version, req.Kind.Kind, obj["apiVersion"], spec)
	}
	mux.Handle("/grow", review(func(req *admissionv1.AdmissionRequest, obj map[string]any) admissionv1.AdmissionResponse {
		spec, _ := obj["spec"].(map[string]any)
		size, _ := spec["size"].(float64)
		if _, ok := spec["size"]; !ok || size >= 10 {
			return admissionv1.AdmissionResponse{Allowed: true}
		}
		note, _ := json.Marshal(seen(req, obj))
		patch := fmt.Sprintf(`[{"op":"replace","path":"/spec/size","value":%d},{"op":"add","path":"/metadata/annotations","value":{"grown-from":%s}}]`, int(size)+1, note)
		pt := admissionv1.PatchTypeJSONPatch
		return admissionv1.AdmissionResponse{Allowed: true, Patch: []byte(patch), PatchType: &pt}
	}))
	mux.Handle("/deny", review(func(req *admissionv1.AdmissionRequest, obj map[string]any) admissionv1.AdmissionResponse {
		return admissionv1.AdmissionResponse{Result: &metav1.Status{Message: seen(req, obj)}}
	}))
	mux.Handle("/exact", review(func(req *admissionv1.AdmissionRequest, obj map[string]any) admissionv1.AdmissionResponse {
		return admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "the Exact webhook was called: " + seen(req, obj)}}
	}))
	srv := httptest.NewTLSServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

func TestWebhookEquivalentConversion(t *testing.T) {
	run := webhookRuns.Add(1)
	group := fmt.Sprintf("equiv%d.kapi.test", run)
	gv1, gvb := schema.GroupVersion{Group: group, Version: "v1"}, schema.GroupVersion{Group: group, Version: "v1beta1"}
	hooks, ca := chairHooks(t, gv1, gvb)
	kube := kubeAPIServer(t)
	srv, kapiCA := webhookKapi(t)
	sides := []hookSide{{"kube-apiserver", kube.URL, kube.CA, "admin-token"}, {"kapi", srv.URL, kapiCA, "admin-token"}}
	results := make([]map[string]any, len(sides))
	for i, s := range sides {
		t.Run(s.name, func(t *testing.T) {
			results[i] = equivalentScenario(t, s, group, hooks, ca)
		})
	}
	if t.Failed() {
		return
	}
	for key, want := range map[string]any{
		"small chair": "legs=5 grown-from=kind=" + group + "/v1/Chair apiVersion=" + group + "/v1 spec=map[size:4]",
		"big chair":   answer{400, `admission webhook "deny.kapi.test" denied the request: kind=` + group + `/v1/Chair apiVersion=` + group + `/v1 spec=map[size:12]`},
		"read at v1":  "size=5",
	} {
		if got := results[0][key]; !cmp.Equal(got, want) {
			t.Errorf("kube-apiserver's %s: got %v; want %v", key, got, want)
		}
	}
	if d := cmp.Diff(results[0], results[1]); d != "" {
		t.Errorf("kapi differs from kube-apiserver (-kube +kapi):\n%s", d)
	}
}

// equivalentScenario installs the chairs CRD and the webhooks on s,
// writes two chairs at v1beta1 and returns what it saw.
func equivalentScenario(t *testing.T, s hookSide, group, hooks string, ca []byte) map[string]any {
	ctx := testContext(t)
	cfg := s.config()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	caB64 := base64.StdEncoding.EncodeToString(ca)
	crd := yamlObject(t, fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: chairs.%[1]s}
spec:
  group: %[1]s
  scope: Namespaced
  names: {plural: chairs, singular: chair, kind: Chair, listKind: ChairList}
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: [v1]
      clientConfig: {url: "%[2]s/convert", caBundle: %[3]s}
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
`, group, hooks, caB64))
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the CRD: %v", err)
	}
	t.Cleanup(func() { _ = crds.Delete(context.Background(), crd.GetName(), metav1.DeleteOptions{}) })
	ns := "equiv-" + strings.ReplaceAll(group, ".", "-")
	nsRes := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"})
	if _, err := nsRes.Create(ctx, &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": ns}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nsRes.Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	hook := func(name, path, policy string, conditions ...map[string]any) map[string]any {
		h := map[string]any{"name": name, "clientConfig": map[string]any{"url": hooks + path, "caBundle": caB64},
			"rules":             []any{map[string]any{"operations": []any{"CREATE", "UPDATE"}, "apiGroups": []any{group}, "apiVersions": []any{"v1"}, "resources": []any{"chairs"}}},
			"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": ns}},
			"matchPolicy":       policy, "sideEffects": "None", "admissionReviewVersions": []any{"v1"}}
		if len(conditions) > 0 {
			h["matchConditions"] = conditions
		}
		return h
	}
	configs := []struct {
		resource string
		hooks    []any
	}{
		{"mutatingwebhookconfigurations", []any{hook("grow.kapi.test", "/grow", "Equivalent"), hook("exact.kapi.test", "/exact", "Exact")}},
		// The condition names v1's field: it holds only on the
		// converted object.
		{"validatingwebhookconfigurations", []any{hook("deny.kapi.test", "/deny", "Equivalent", map[string]any{"name": "big", "expression": "object.spec.size >= 10"})}},
	}
	for _, c := range configs {
		res := dyn.Resource(schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: c.resource})
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "admissionregistration.k8s.io/v1", "metadata": map[string]any{"name": ns}, "webhooks": c.hooks}}
		if _, err := res.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", c.resource, err)
		}
		t.Cleanup(func() { _ = res.Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	}
	chairs := func(version string) dynamic.ResourceInterface {
		return dyn.Resource(schema.GroupVersionResource{Group: group, Version: version, Resource: "chairs"}).Namespace(ns)
	}
	poll(t, "the chairs to be served", func(context.Context) (bool, error) {
		_, err1 := chairs("v1beta1").List(ctx, metav1.ListOptions{})
		_, err2 := chairs("v1").List(ctx, metav1.ListOptions{})
		return err1 == nil && err2 == nil, nil
	})
	chair := func(name string, legs int64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1beta1", "kind": "Chair",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"legs": legs}}}
	}
	poll(t, "the webhooks to take effect", func(context.Context) (bool, error) {
		small, err1 := chairs("v1beta1").Create(ctx, chair("probe", 1), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		_, err2 := chairs("v1beta1").Create(ctx, chair("probe", 20), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err1 == nil && small.GetAnnotations()["grown-from"] != "" && err2 != nil, nil
	})
	out := map[string]any{}
	if got, err := chairs("v1beta1").Create(ctx, chair("small", 4), metav1.CreateOptions{}); err != nil {
		out["small chair"] = answerOf(err)
	} else {
		legs, _, _ := unstructured.NestedInt64(got.Object, "spec", "legs")
		out["small chair"] = fmt.Sprintf("legs=%d grown-from=%s", legs, got.GetAnnotations()["grown-from"])
	}
	_, err = chairs("v1beta1").Create(ctx, chair("big", 12), metav1.CreateOptions{})
	out["big chair"] = answerOf(err)
	if got, err := chairs("v1").Get(ctx, "small", metav1.GetOptions{}); err != nil {
		out["read at v1"] = answerOf(err)
	} else {
		size, _, _ := unstructured.NestedInt64(got.Object, "spec", "size")
		out["read at v1"] = fmt.Sprintf("size=%d", size)
	}
	return out
}
