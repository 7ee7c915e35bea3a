package envtest_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/envtest"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// cmDefaulter is a kubebuilder-style defaulter of ConfigMaps.
type cmDefaulter struct{}

func (cmDefaulter) Default(_ context.Context, cm *corev1.ConfigMap) error {
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	if _, ok := cm.Data["color"]; !ok {
		cm.Data["color"] = "blue"
	}
	return nil
}

// cmValidator is a kubebuilder-style validator of ConfigMaps.
type cmValidator struct{}

func (cmValidator) check(cm *corev1.ConfigMap) (admission.Warnings, error) {
	if cm.Data["color"] == "red" {
		return nil, fmt.Errorf("color %q is not allowed", "red")
	}
	return nil, nil
}

func (v cmValidator) ValidateCreate(_ context.Context, cm *corev1.ConfigMap) (admission.Warnings, error) {
	return v.check(cm)
}

func (v cmValidator) ValidateUpdate(_ context.Context, _, cm *corev1.ConfigMap) (admission.Warnings, error) {
	return v.check(cm)
}

func (cmValidator) ValidateDelete(context.Context, *corev1.ConfigMap) (admission.Warnings, error) {
	return nil, nil
}

// webhookConfigurations are what kubebuilder generates for the defaulter
// and validator (config/webhook/manifests.yaml): a service reference
// with controller-runtime's generated paths, which envtest's
// WebhookInstallOptions rewrites to LocalServingHost:LocalServingPort.
func webhookConfigurations() ([]*admissionv1.MutatingWebhookConfiguration, []*admissionv1.ValidatingWebhookConfiguration) {
	fail, none := admissionv1.Fail, admissionv1.SideEffectClassNone
	rules := []admissionv1.RuleWithOperations{{
		Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
		Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
	}}
	svc := func(path string) admissionv1.WebhookClientConfig {
		return admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Name: "webhook-service", Namespace: "system", Path: ptr(path)}}
	}
	return []*admissionv1.MutatingWebhookConfiguration{{
			TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
			ObjectMeta: metav1.ObjectMeta{Name: "mutating-webhook-configuration"},
			Webhooks: []admissionv1.MutatingWebhook{{
				Name: "mconfigmap.kb.io", ClientConfig: svc("/mutate--v1-configmap"), Rules: rules,
				FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
			}},
		}}, []*admissionv1.ValidatingWebhookConfiguration{{
			TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
			ObjectMeta: metav1.ObjectMeta{Name: "validating-webhook-configuration"},
			Webhooks: []admissionv1.ValidatingWebhook{{
				Name: "vconfigmap.kb.io", ClientConfig: svc("/validate--v1-configmap"), Rules: rules,
				FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
			}},
		}}
}

// A kubebuilder webhook suite: the configurations in
// WebhookInstallOptions, a manager whose webhook server listens where
// envtest says (LocalServingHost, LocalServingPort, LocalServingCertDir),
// a defaulter and a validator built with ctrl.NewWebhookManagedBy. Kapi
// calls them over TLS: a create is defaulted, an invalid one is denied
// with kube's message, an update is validated too.
func TestWebhooks(t *testing.T) {
	t.Parallel()
	mutating, validating := webhookConfigurations()
	e := &envtest.Environment{WebhookInstallOptions: envtest.WebhookInstallOptions{
		MutatingWebhooks: mutating, ValidatingWebhooks: validating,
	}}
	cfg := start(t, e)
	wio := &e.WebhookInstallOptions
	if len(wio.LocalServingCAData) == 0 || wio.LocalServingPort == 0 {
		t.Fatalf("the webhook serving options were not prepared: %+v", wio)
	}
	c := newClient(t, cfg)

	// The configurations were created through the API, their client
	// config rewritten as envtest does.
	var mwc admissionv1.MutatingWebhookConfiguration
	if err := c.Get(ctxFor(t), client.ObjectKey{Name: "mutating-webhook-configuration"}, &mwc); err != nil {
		t.Fatalf("get the mutating configuration: %v", err)
	}
	// (envtest writes "https://host:port/" + path: two slashes.)
	want := fmt.Sprintf("https://%s//mutate--v1-configmap", net.JoinHostPort(wio.LocalServingHost, strconv.Itoa(wio.LocalServingPort)))
	if cc := mwc.Webhooks[0].ClientConfig; cc.URL == nil || *cc.URL != want || cc.Service != nil || len(cc.CABundle) == 0 {
		t.Fatalf("mutating webhook client config: got URL %v, service %v, %d bytes of caBundle; want URL %s and a caBundle",
			cc.URL, cc.Service, len(cc.CABundle), want)
	}

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr(true)},
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: wio.LocalServingHost, Port: wio.LocalServingPort, CertDir: wio.LocalServingCertDir,
		}),
	})
	if err != nil {
		t.Fatalf("NewManager: %v", err)
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &corev1.ConfigMap{}).
		WithDefaulter(cmDefaulter{}).WithValidator(cmValidator{}).Complete(); err != nil {
		t.Fatalf("webhooks: %v", err)
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
	// Wait for the webhook server to serve, as kubebuilder suites do.
	if err := wait.PollUntilContextTimeout(ctxFor(t), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return mgr.GetWebhookServer().StartedChecker()(nil) == nil, nil
	}); err != nil {
		t.Fatalf("the webhook server did not start: %v", err)
	}

	for _, tt := range []struct {
		name      string
		data      map[string]string
		wantColor string
		wantDeny  string
	}{
		{name: "defaulted", data: nil, wantColor: "blue"},
		{name: "kept", data: map[string]string{"color": "green"}, wantColor: "green"},
		{name: "denied", data: map[string]string{"color": "red"},
			wantDeny: `admission webhook "vconfigmap.kb.io" denied the request: color "red" is not allowed`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: tt.name}, Data: tt.data}
			err := c.Create(ctxFor(t), cm)
			if tt.wantDeny != "" {
				if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), tt.wantDeny) {
					t.Fatalf("create: got %v; want 403 %q", err, tt.wantDeny)
				}
				if err := c.Get(ctxFor(t), client.ObjectKey{Namespace: "default", Name: tt.name}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
					t.Fatalf("get after a denied create: got %v; want NotFound", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if got := cm.Data["color"]; got != tt.wantColor {
				t.Fatalf("created color: got %q; want %q", got, tt.wantColor)
			}
			// An update to an invalid value is denied as well.
			cm.Data["color"] = "red"
			if err := c.Update(ctxFor(t), cm); !apierrors.IsForbidden(err) ||
				!strings.Contains(err.Error(), `admission webhook "vconfigmap.kb.io" denied the request`) {
				t.Fatalf("update to red: got %v; want denied by vconfigmap.kb.io", err)
			}
		})
	}
}
