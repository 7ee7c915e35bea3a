package conformance

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
)

// The webhook server the webhook tests share (TestWebhooksAsKube, the
// webhook cases of the differential corpus, the webhook benchmark): a
// controller-runtime webhook server on loopback TLS, reachable by URL
// from kapi and from kube-apiserver alike. Its paths:
//
//	/mutate      defaulter of ConfigMaps (a JSONPatch adding annotations)
//	/label       a second defaulter, adding a label (reinvocation)
//	/validate    validator of ConfigMaps (data key "forbidden"; delete of
//	             one labelled protected)
//	/deny-label  validator of any kind: denies an object labelled deny
//	/echo        denies every request with what its AdmissionReview says
//	/deny-422    denies with code 422 and reason Invalid; /deny-bare with
//	             no status at all
//	/warn        allows with two warnings; /patch-any allows with a patch
//	             adding an annotation, whatever the operation
//	/hang        answers after 5s (a timeout)
//	/garbage     answers HTML; /wronguid a review for another UID;
//	/badpatch    a patch that does not apply; /status500 an HTTP 500

// cmDefaulter is a kubebuilder-style defaulter: it records who defaulted
// the ConfigMap and which labels it had then (so a reinvocation shows).
type cmDefaulter struct{}

func (cmDefaulter) Default(_ context.Context, cm *corev1.ConfigMap) error {
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations["defaulted-by"] = "kapi-test-defaulter"
	var keys []string
	for k := range cm.Labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	cm.Annotations["seen-labels"] = strings.Join(keys, ",")
	return nil
}

// cmLabeller adds a label: a second mutating webhook, after which the
// defaulter (reinvocationPolicy IfNeeded) is called again.
type cmLabeller struct{}

func (cmLabeller) Default(_ context.Context, cm *corev1.ConfigMap) error {
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	cm.Labels["labelled"] = "yes"
	return nil
}

// cmValidator is a kubebuilder-style validator.
type cmValidator struct{}

func (cmValidator) check(cm *corev1.ConfigMap) (admission.Warnings, error) {
	if _, ok := cm.Data["forbidden"]; ok {
		return nil, fmt.Errorf("data key %q is not allowed", "forbidden")
	}
	if cm.Labels["warn"] == "true" {
		return admission.Warnings{"configmaps labelled warn are discouraged"}, nil
	}
	return nil, nil
}

func (v cmValidator) ValidateCreate(_ context.Context, cm *corev1.ConfigMap) (admission.Warnings, error) {
	return v.check(cm)
}

func (v cmValidator) ValidateUpdate(_ context.Context, _, cm *corev1.ConfigMap) (admission.Warnings, error) {
	return v.check(cm)
}

func (cmValidator) ValidateDelete(_ context.Context, cm *corev1.ConfigMap) (admission.Warnings, error) {
	if cm.Labels["protected"] == "true" {
		return nil, fmt.Errorf("configmap %s is protected", cm.Name)
	}
	return nil, nil
}

// crWebhookServer starts a controller-runtime webhook server on loopback
// TLS with the defaulter (/mutate), the labeller (/label), the validator
// (/validate) and a handler that answers only after 5s (/hang); it
// returns its base URL and CA bundle.
func crWebhookServer(t testing.TB) (string, []byte) {
	t.Helper()
	ctrllog.SetLogger(logr.Discard()) // quiet, as TestControllerRuntimeManager
	cert, caPEM, err := server.SelfSignedCert("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	key, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	for name, block := range map[string]*pem.Block{"tls.crt": {Type: "CERTIFICATE", Bytes: cert.Certificate[0]}, "tls.key": {Type: "PRIVATE KEY", Bytes: key}} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	port := freePort(t)
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	srv := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: dir})
	srv.Register("/mutate", admission.WithDefaulter[*corev1.ConfigMap](scheme, cmDefaulter{}))
	srv.Register("/label", admission.WithDefaulter[*corev1.ConfigMap](scheme, cmLabeller{}))
	srv.Register("/validate", admission.WithValidator[*corev1.ConfigMap](scheme, cmValidator{}))
	srv.Register("/hang", &admission.Webhook{Handler: admission.HandlerFunc(func(ctx context.Context, _ admission.Request) admission.Response {
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
		}
		return admission.Allowed("")
	})})
	// Bad webhooks: an answer that is not JSON, one for another UID, a
	// patch that does not apply.
	srv.Register("/garbage", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>oops</html>"))
	}))
	srv.Register("/wronguid", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"not-the-request","allowed":true}}`))
	}))
	srv.Register("/badpatch", &admission.Webhook{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		r := admission.Allowed("")
		pt := admissionv1.PatchTypeJSONPatch
		r.Patch, r.PatchType = []byte(`[{"op":"replace","path":"/spec/missing","value":1}]`), &pt
		return r
	})})
	// /echo denies every request with what its AdmissionReview says, so
	// the reviews two servers send can be compared by their answers.
	srv.Register("/echo", &admission.Webhook{Handler: admission.HandlerFunc(func(_ context.Context, req admission.Request) admission.Response {
		var opts map[string]any
		_ = json.Unmarshal(req.Options.Raw, &opts)
		var obj, old map[string]any
		_ = json.Unmarshal(req.Object.Raw, &obj)
		_ = json.Unmarshal(req.OldObject.Raw, &old)
		md := func(o map[string]any) any {
			if o == nil {
				return nil
			}
			m, _ := o["metadata"].(map[string]any)
			labels, _ := m["labels"].(map[string]any)
			delete(labels, "kubernetes.io/metadata.name") // kube's namespaces have it, kapi's (not this test's matter) not yet
			return map[string]any{"name": m["name"], "labels": labels, "kind": o["kind"], "apiVersion": o["apiVersion"]}
		}
		return admission.Denied(fmt.Sprintf("op=%s kind=%v resource=%v sub=%q requestKind=%v requestResource=%v requestSub=%q name=%q namespace=%q user=%s uid=%s groups=%v dryRun=%v object=%v oldObject=%v options=%v",
			req.Operation, req.Kind, req.Resource, req.SubResource, req.RequestKind, req.RequestResource, req.RequestSubResource, req.Name, req.Namespace,
			req.UserInfo.Username, req.UserInfo.UID, req.UserInfo.Groups, *req.DryRun, md(obj), md(old), opts))
	})})
	srv.Register("/deny-label", &admission.Webhook{Handler: admission.HandlerFunc(denyByLabel)})
	srv.Register("/deny-422", &admission.Webhook{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		r := admission.Denied("spec is not to my liking")
		r.Result.Code, r.Result.Reason = http.StatusUnprocessableEntity, metav1.StatusReasonInvalid
		return r
	})})
	srv.Register("/deny-bare", &admission.Webhook{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false}}
	})})
	srv.Register("/warn", &admission.Webhook{Handler: admission.HandlerFunc(func(_ context.Context, req admission.Request) admission.Response {
		return admission.Allowed("").WithWarnings("first from "+string(req.Operation), "second")
	})})
	srv.Register("/patch-any", &admission.Webhook{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		r := admission.Allowed("")
		pt := admissionv1.PatchTypeJSONPatch
		r.Patch, r.PatchType = []byte(`[{"op":"add","path":"/metadata/annotations","value":{"patched":"yes"}}]`), &pt
		return r
	})})
	srv.Register("/status500", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "oops", http.StatusInternalServerError)
	}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	for deadline := time.Now().Add(time.Minute); srv.StartedChecker()(nil) != nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the webhook server did not start")
		}
	}
	return fmt.Sprintf("https://127.0.0.1:%d", port), caPEM
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// denyByLabel denies an object of any kind (the old object of a delete)
// labelled deny, with the label's value as the reason.
func denyByLabel(_ context.Context, req admission.Request) admission.Response {
	raw := req.Object.Raw
	if len(raw) == 0 {
		raw = req.OldObject.Raw
	}
	var obj struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if v, ok := obj.Metadata.Labels["deny"]; ok {
		return admission.Denied(fmt.Sprintf("%s %s is labelled deny: %s", strings.ToLower(req.Kind.Kind), req.Name, v))
	}
	return admission.Allowed("")
}
