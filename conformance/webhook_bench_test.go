package conformance

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/reference/kubeapiserver"
	"github.com/kapi-dev/kapi/storage/memory"
)

// BenchmarkWebhookCreate: a ConfigMap create through client-go's typed
// client (protobuf, HTTPS) on kapi's example server and on the real
// kube-apiserver, without webhooks and through one mutating webhook (a
// controller-runtime defaulter) and one validating webhook (a
// controller-runtime validator) on the same loopback webhook server.
//
//	go test -run '^$' -bench BenchmarkWebhookCreate -benchmem ./conformance/
func BenchmarkWebhookCreate(b *testing.B) {
	hooks, hookCA := crWebhookServer(b)
	kube := kubeAPIServerTB(b)
	reg, err := server.New(server.Options{Storage: memory.New(memory.Options{}),
		Auth: server.Auth{TokenAuthFile: writeTempTB(b, "tokens.csv", []byte(refTokens))}})
	if err != nil {
		b.Fatal(err)
	}
	cert, caPEM, err := server.SelfSignedCert("127.0.0.1")
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(reg)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.EnableHTTP2 = true
	srv.StartTLS()
	b.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); reg.Close() })
	sides := []hookSide{{"kapi", srv.URL, caPEM, "admin-token"}, {"kube", kube.URL, kube.CA, "admin-token"}}
	run := fmt.Sprintf("whb-%d", time.Now().UnixNano())

	for _, s := range sides {
		ctx := context.Background()
		cs, err := kubernetes.NewForConfig(s.config())
		if err != nil {
			b.Fatal(err)
		}
		ns := "kapi-" + run
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"kapi-webhook-run": run}}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
		cms := cs.CoreV1().ConfigMaps(ns)
		create := func(b *testing.B, prefix string) {
			prefix = fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()) // each run (-count) its own names
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", prefix, i)}, Data: map[string]string{"a": "b"}}
				if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.Run(s.name+"/none", func(b *testing.B) { create(b, "none") })

		scope := &metav1.LabelSelector{MatchLabels: map[string]string{"kapi-webhook-run": run}}
		none := admissionregistrationv1.SideEffectClassNone
		rules := []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}
		mutate, validate := hooks+"/mutate", hooks+"/validate"
		m := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "bench-m-" + run},
			Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "defaulter.kapi.test", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &mutate, CABundle: hookCA},
				Rules: rules, NamespaceSelector: scope, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}}}
		v := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "bench-v-" + run},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "validator.kapi.test", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &validate, CABundle: hookCA},
				Rules: rules, NamespaceSelector: scope, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}}}
		if _, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, m, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			_ = cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(context.Background(), m.Name, metav1.DeleteOptions{})
		})
		if _, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, v, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			_ = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), v.Name, metav1.DeleteOptions{})
		})
		// Until both webhooks are in effect (kube-apiserver's informers).
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
			_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Data: map[string]string{"forbidden": "x"}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err != nil {
				if cm2, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err == nil && cm2.Annotations["defaulted-by"] != "" {
					break
				}
			}
			if time.Now().After(deadline) {
				b.Fatal("the webhooks did not take effect")
			}
		}
		b.Run(s.name+"/mutating+validating", func(b *testing.B) { create(b, "hooked") })
	}
}

// kubeAPIServerTB is kubeAPIServer for benchmarks.
func kubeAPIServerTB(tb testing.TB) *kubeapiserver.Server {
	tb.Helper()
	refAPIServer.once.Do(func() {
		start := time.Now()
		refAPIServer.srv, refAPIServer.etcd, refAPIServer.err = startKubeAPIServer()
		refAPIServer.took = time.Since(start)
	})
	if refAPIServer.err != nil {
		tb.Fatalf("reference kube-apiserver: %v", refAPIServer.err)
	}
	return refAPIServer.srv
}

func writeTempTB(tb testing.TB, name string, data []byte) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}
