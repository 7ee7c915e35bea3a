package envtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/envtest"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// A two-version kind, as kubebuilder scaffolds one with a conversion
// webhook: v1 (the hub, stored) has spec.size, v2 spec.replicas.
var (
	thingV1 = schema.GroupVersion{Group: "conv.kapi.dev", Version: "v1"}
	thingV2 = schema.GroupVersion{Group: "conv.kapi.dev", Version: "v2"}
)

type ThingV1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Size int64 `json:"size"`
	} `json:"spec"`
}

func (t *ThingV1) DeepCopyObject() runtime.Object {
	c := *t
	t.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

func (*ThingV1) Hub() {}

type ThingV2 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Replicas int64 `json:"replicas"`
	} `json:"spec"`
}

func (t *ThingV2) DeepCopyObject() runtime.Object {
	c := *t
	t.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

func (t *ThingV2) ConvertTo(hub conversion.Hub) error {
	h := hub.(*ThingV1)
	t.ObjectMeta.DeepCopyInto(&h.ObjectMeta)
	h.Spec.Size = t.Spec.Replicas
	return nil
}

func (t *ThingV2) ConvertFrom(hub conversion.Hub) error {
	h := hub.(*ThingV1)
	h.ObjectMeta.DeepCopyInto(&t.ObjectMeta)
	t.Spec.Replicas = h.Spec.Size
	return nil
}

// A multi-version CRD whose kind is convertible in Environment.Scheme
// gets envtest's conversion webhook (LocalServingHost:Port/convert), and
// kapi calls the manager's conversion webhook: an object created as v2
// reads back as v1 with its field converted, and the other way round.
func TestConversionWebhook(t *testing.T) {
	t.Parallel()
	sch := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(sch); err != nil {
		t.Fatal(err)
	}
	sch.AddKnownTypeWithName(thingV1.WithKind("Thing"), &ThingV1{})
	sch.AddKnownTypeWithName(thingV2.WithKind("Thing"), &ThingV2{})
	metav1.AddToGroupVersion(sch, thingV1)
	metav1.AddToGroupVersion(sch, thingV2)
	open := &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
		Type: "object", XPreserveUnknownFields: ptr(true)}}
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "things.conv.kapi.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "conv.kapi.dev", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "things", Singular: "thing", Kind: "Thing", ListKind: "ThingList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Schema: open},
				{Name: "v2", Served: true, Schema: open},
			},
		},
	}
	e := &envtest.Environment{Scheme: sch, CRDs: []*apiextensionsv1.CustomResourceDefinition{crd}}
	cfg := start(t, e)
	if conv := e.CRDs[0].Spec.Conversion; conv == nil || conv.Strategy != apiextensionsv1.WebhookConverter {
		t.Fatalf("the CRD's conversion: got %+v; want envtest's webhook", conv)
	}
	wio := &e.WebhookInstallOptions
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:     sch,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr(true)},
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: wio.LocalServingHost, Port: wio.LocalServingPort, CertDir: wio.LocalServingCertDir,
		}),
	})
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &ThingV1{}).Complete(); err != nil {
		t.Fatalf("conversion webhook: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	if err := wait.PollUntilContextTimeout(ctxFor(t), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return mgr.GetWebhookServer().StartedChecker()(nil) == nil, nil
	}); err != nil {
		t.Fatalf("the webhook server did not start: %v", err)
	}

	c, err := client.New(cfg, client.Options{Scheme: sch})
	if err != nil {
		t.Fatal(err)
	}
	v2 := &ThingV2{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}}
	v2.Spec.Replicas = 3
	if err := c.Create(ctxFor(t), v2); err != nil {
		t.Fatalf("create as v2: %v", err)
	}
	if v2.Spec.Replicas != 3 {
		t.Fatalf("create as v2 answered replicas %d; want 3", v2.Spec.Replicas)
	}
	for _, tt := range []struct {
		gv    schema.GroupVersion
		field string
	}{{thingV1, "size"}, {thingV2, "replicas"}} {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(tt.gv.WithKind("Thing"))
		if err := c.Get(ctxFor(t), client.ObjectKey{Namespace: "default", Name: "a"}, u); err != nil {
			t.Fatalf("get as %s: %v", tt.gv.Version, err)
		}
		if got, _, _ := unstructured.NestedInt64(u.Object, "spec", tt.field); got != 3 {
			t.Errorf("get as %s: spec.%s = %d; want 3 (%v)", tt.gv.Version, tt.field, got, u.Object["spec"])
		}
	}
}
