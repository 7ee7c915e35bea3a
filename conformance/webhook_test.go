package conformance

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"maps"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/cel"
	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/registry"
)

// Admission webhooks (EXT-9) as controller projects use them: a
// controller-runtime webhook server (its webhook and admission packages,
// a defaulter and a validator of ConfigMaps as kubebuilder scaffolds
// them) registered through MutatingWebhookConfigurations and
// ValidatingWebhookConfigurations with its caBundle, called by the
// server over loopback TLS. The same scenarios run against the example
// server and the real kube-apiserver; their answers (objects, status
// codes, messages, kubectl's output) must be identical.
//
// Every webhook is scoped by namespaceSelector to the run's namespace,
// so that the shared kube-apiserver's other tests never meet them, and
// every configuration is deleted when the test ends.

// hookSide is one server the scenarios run against.
type hookSide struct {
	name  string
	url   string
	ca    []byte
	token string
}

func (s hookSide) config() *rest.Config {
	return &rest.Config{Host: s.url, BearerToken: s.token, TLSClientConfig: rest.TLSClientConfig{CAData: s.ca}, QPS: -1}
}

// webhookRuns numbers the runs in a process (-count), so each has names
// of its own on the shared kube-apiserver.
var webhookRuns atomic.Int64

func TestWebhooksAsKube(t *testing.T) {
	hooks, hookCA := crWebhookServer(t)
	kube := kubeAPIServer(t)
	srv, ca := webhookKapi(t)
	sides := []hookSide{{"kube-apiserver", kube.URL, kube.CA, "admin-token"}, {"kapi", srv.URL, ca, "admin-token"}}
	run := fmt.Sprintf("wh-%d", webhookRuns.Add(1))
	down := fmt.Sprintf("https://127.0.0.1:%d/validate", freePort(t)) // nothing listens there

	results := make([]map[string]any, len(sides))
	for i, s := range sides {
		t.Run(s.name, func(t *testing.T) {
			results[i] = webhookScenarios(t, s, hooks, hookCA, run, down)
		})
	}
	if t.Failed() {
		return
	}
	// Checked on kube's answers so the comparison cannot pass on two
	// servers equally wrong.
	for key, want := range map[string]any{
		"create denied":      answer{403, `admission webhook "validator.kapi.test" denied the request: data key "forbidden" is not allowed`},
		"reinvoked defaults": "labelled,want-label",
	} {
		if got := results[0][key]; !cmp.Equal(got, want) {
			t.Errorf("kube-apiserver's %s: got %v; want %v", key, got, want)
		}
	}
	if d := cmp.Diff(results[0], results[1]); d != "" {
		t.Errorf("kapi differs from kube-apiserver (-kube +kapi):\n%s", d)
	}
	for _, k := range slices.Sorted(maps.Keys(results[0])) {
		t.Logf("both: %s: %v", k, results[0][k])
	}
}

// webhookKapi is the example server on TLS with refTokens and
// cel.CompileMatchConditions for webhooks' matchConditions.
func webhookKapi(t *testing.T) (*httptest.Server, []byte) {
	t.Helper()
	reg, err := server.New(withStorage(t, server.Options{Auth: server.Auth{TokenAuthFile: writeTemp(t, "tokens.csv", []byte(refTokens))},
		Registry: registry.Options{WebhookConditions: cel.CompileMatchConditions}}))
	if err != nil {
		t.Fatal(err)
	}
	cert, caPEM, err := server.SelfSignedCert("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(reg)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); reg.Close() })
	return srv, caPEM
}

// answer is an API error as a client sees it.
type answer struct {
	Code    int32
	Message string
}

func answerOf(err error) any {
	if err == nil {
		return "ok"
	}
	if se, ok := err.(apierrors.APIStatus); ok {
		return answer{se.Status().Code, uids.ReplaceAllString(se.Status().Message, "<uid>")}
	}
	return "error: " + err.Error()
}

// uids are the random request UIDs messages quote.
var uids = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// webhookScenarios runs the scenarios against s and returns what each
// saw, by name.
func webhookScenarios(t *testing.T, s hookSide, hooks string, ca []byte, run, down string) map[string]any {
	ctx := testContext(t)
	cfg := s.config()
	warnings := &warningLog{}
	cfg.WarningHandler = warnings
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	k := kubectlAs(t, s.url, server.Credentials{Token: s.token, CertificateAuthPEM: s.ca})
	out := map[string]any{}
	ns, other := "kapi-"+run, "kapi-"+run+"-other"
	for _, n := range []string{ns, other} {
		labels := map[string]string{}
		if n == ns {
			labels["kapi-webhook-run"] = run
		}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: labels}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, n := range []string{ns, other} {
			_ = cs.CoreV1().Namespaces().Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	})
	scope := &metav1.LabelSelector{MatchLabels: map[string]string{"kapi-webhook-run": run}}
	none, ifNeeded := admissionregistrationv1.SideEffectClassNone, admissionregistrationv1.IfNeededReinvocationPolicy
	url := func(path string) *string { u := hooks + path; return &u }
	cmRule := func(ops ...admissionregistrationv1.OperationType) []admissionregistrationv1.RuleWithOperations {
		return []admissionregistrationv1.RuleWithOperations{{Operations: ops, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}
	}
	cms := cs.CoreV1().ConfigMaps(ns)
	probe := func(name string, data map[string]string, labels map[string]string) (*corev1.ConfigMap, error) {
		return cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Data: data}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	}
	// until waits for a configuration to take effect (kube-apiserver's
	// informers take a moment; kapi's are effective for the next
	// request), by dry-run creates.
	until := func(what string, ok func() bool) {
		poll(t, what, func(context.Context) (bool, error) { return ok(), nil })
	}
	deleteValidating := func(name string) {
		_ = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), name, metav1.DeleteOptions{})
	}

	// The configurations, through the typed client (protobuf).
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "kapi-mutators-" + run},
		Webhooks: []admissionregistrationv1.MutatingWebhook{
			{Name: "defaulter.kapi.test", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: url("/mutate"), CABundle: ca},
				Rules: cmRule(admissionregistrationv1.Create, admissionregistrationv1.Update), NamespaceSelector: scope, SideEffects: &none,
				AdmissionReviewVersions: []string{"v1"}, ReinvocationPolicy: &ifNeeded},
			{Name: "labeller.kapi.test", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: url("/label"), CABundle: ca},
				Rules: cmRule(admissionregistrationv1.Create), NamespaceSelector: scope, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
				ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"want-label": "yes"}}},
		}}
	got, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mutating, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create the mutating configuration: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(context.Background(), mutating.Name, metav1.DeleteOptions{})
	})
	h := got.Webhooks[0]
	out["defaults"] = fmt.Sprintf("failurePolicy=%s matchPolicy=%s timeoutSeconds=%d reinvocationPolicy=%s objectSelector=%v scope=%s",
		*h.FailurePolicy, *h.MatchPolicy, *h.TimeoutSeconds, *h.ReinvocationPolicy, h.ObjectSelector, *h.Rules[0].Scope)
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "kapi-validators-" + run},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			{Name: "validator.kapi.test", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: url("/validate"), CABundle: ca},
				Rules:             cmRule(admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete),
				NamespaceSelector: scope, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}},
		}}
	if _, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, validating, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the validating configuration: %v", err)
	}
	t.Cleanup(func() { deleteValidating(validating.Name) })
	until("the webhooks to be called", func() bool {
		cm, err := probe("probe", nil, nil)
		_, denied := probe("probe", map[string]string{"forbidden": "x"}, nil)
		return err == nil && cm.Annotations["defaulted-by"] != "" && denied != nil
	})

	// Create, update and delete through the typed client.
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "plain"}, Data: map[string]string{"a": "b"}}, metav1.CreateOptions{})
	out["create"] = answerOf(err)
	if err == nil {
		out["create defaulted"] = cm.Annotations
	}
	cm, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "relabel", Labels: map[string]string{"want-label": "yes"}}}, metav1.CreateOptions{})
	if err == nil {
		out["reinvoked defaults"] = cm.Annotations["seen-labels"]
		out["reinvoked labels"] = cm.Labels
	} else {
		out["reinvoked defaults"] = answerOf(err)
	}
	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Data: map[string]string{"forbidden": "x"}}, metav1.CreateOptions{})
	out["create denied"] = answerOf(err)
	if cm, err := cms.Get(ctx, "plain", metav1.GetOptions{}); err == nil {
		cm.Data["forbidden"] = "x"
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		out["update denied"] = answerOf(err)
	}
	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "warned", Labels: map[string]string{"warn": "true"}}}, metav1.CreateOptions{})
	out["create warned"] = fmt.Sprint(answerOf(err), " ", warnings.all())
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keep", Labels: map[string]string{"protected": "true"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out["delete denied"] = answerOf(cms.Delete(ctx, "keep", metav1.DeleteOptions{}))
	out["delete"] = answerOf(cms.Delete(ctx, "plain", metav1.DeleteOptions{}))

	// kubectl.
	kubectlRun := func(args ...string) string {
		stdout, stderr, err := k.run(append([]string{"-n", ns}, args...)...)
		return fmt.Sprintf("%v | %s | %s", err, strings.TrimSpace(stdout), strings.TrimSpace(stderr))
	}
	out["kubectl create denied"] = kubectlRun("create", "configmap", "kubectl-bad", "--from-literal=forbidden=x")
	out["kubectl create"] = kubectlRun("create", "configmap", "kubectl-ok", "-o", "jsonpath={.metadata.annotations.defaulted-by}")
	out["kubectl delete denied"] = kubectlRun("delete", "configmap", "keep")

	// The reviews themselves: /echo denies with what it was sent.
	echoed, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "echo", Labels: map[string]string{"echo": run}}, Data: map[string]string{"a": "b"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	echo := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "kapi-echo-" + run},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "echo.kapi.test", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: url("/echo"), CABundle: ca},
			Rules: []admissionregistrationv1.RuleWithOperations{
				{Operations: []admissionregistrationv1.OperationType{"UPDATE", "DELETE"}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps", "namespaces"}}},
				{Operations: []admissionregistrationv1.OperationType{"CREATE"}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}},
			},
			NamespaceSelector: scope, ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"echo": run}},
			SideEffects: &none, AdmissionReviewVersions: []string{"v1"}}}}
	if _, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, echo, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	until("echo to take effect", func() bool {
		_, err := cms.Update(ctx, echoed, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil
	})
	echoed.Data["a"] = "c"
	_, err = cms.Update(ctx, echoed, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: "echo-test"})
	out["review of an update"] = answerOf(err)
	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "echo-", Labels: map[string]string{"echo": run}}}, metav1.CreateOptions{})
	if a, ok := answerOf(err).(answer); ok { // the generated suffix is random
		a.Message = regexp.MustCompile(`echo-[a-z0-9]{5}\b`).ReplaceAllString(a.Message, "echo-<random>")
		out["review of a create with generateName"] = a
	} else {
		out["review of a create with generateName"] = answerOf(err)
	}
	out["review of a delete"] = answerOf(cms.Delete(ctx, "echo", metav1.DeleteOptions{PropagationPolicy: ptrTo(metav1.DeletePropagationForeground)}))
	nsObj, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nsObj.Labels["echo"] = run
	_, err = cs.CoreV1().Namespaces().Update(ctx, nsObj, metav1.UpdateOptions{})
	out["review of a namespace update"] = answerOf(err)
	deleteValidating(echo.Name)
	until("echo to be gone", func() bool {
		_, err := cms.Update(ctx, echoed, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil || apierrors.IsConflict(err)
	})

	// kubectl apply of a configuration, then of a change to it.
	manifest := func(timeout int) string {
		return fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: kapi-applied-%s
webhooks:
- name: applied.kapi.test
  clientConfig:
    url: %s/validate
    caBundle: %s
  rules:
  - operations: ["CREATE"]
    apiGroups: [""]
    apiVersions: ["v1"]
    resources: ["configmaps"]
  namespaceSelector:
    matchLabels: {kapi-webhook-run: %s}
  sideEffects: None
  admissionReviewVersions: ["v1"]
  timeoutSeconds: %d
`, run, hooks, base64.StdEncoding.EncodeToString(ca), run, timeout)
	}
	for i, timeout := range []int{5, 7} {
		path := writeTemp(t, fmt.Sprintf("applied-%d.yaml", i), []byte(manifest(timeout)))
		out[fmt.Sprintf("kubectl apply %d", i)] = kubectlRun("apply", "-f", path)
	}
	out["kubectl apply --server-side"] = kubectlRun("apply", "--server-side", "--force-conflicts", "-f", writeTemp(t, "applied-ssa.yaml", []byte(manifest(9))))
	out["kubectl apply result"] = kubectlRun("get", "validatingwebhookconfiguration", "kapi-applied-"+run, "-o",
		"jsonpath={.webhooks[0].timeoutSeconds} {.webhooks[0].failurePolicy} {.webhooks[0].matchPolicy}")
	out["kubectl delete configuration"] = kubectlRun("delete", "validatingwebhookconfiguration", "kapi-applied-"+run)

	// Dry run through webhooks with sideEffects None; Some is refused in v1.
	cm, err = probe("dry", nil, nil)
	out["dry run"] = answerOf(err)
	if err == nil {
		out["dry run defaulted"] = cm.Annotations["defaulted-by"]
		_, err = cms.Get(ctx, "dry", metav1.GetOptions{})
		out["dry run stored"] = apierrors.IsNotFound(err) == false
	}
	some := admissionregistrationv1.SideEffectClassSome
	withSome := validating.DeepCopy()
	withSome.Name, withSome.Webhooks[0].SideEffects = "kapi-some-"+run, &some
	_, err = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, withSome, metav1.CreateOptions{})
	out["sideEffects Some"] = answerOf(err)

	// namespaceSelector: the other namespace is not the webhooks'.
	_, err = cs.CoreV1().ConfigMaps(other).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere"}, Data: map[string]string{"forbidden": "x"}}, metav1.CreateOptions{})
	out["namespaceSelector"] = answerOf(err)

	// failurePolicy with the webhook server down, a timeout, and an
	// objectSelector: one configuration at a time.
	ignore, fail := admissionregistrationv1.Ignore, admissionregistrationv1.Fail
	one := func(t *testing.T, name, target string, policy *admissionregistrationv1.FailurePolicyType, timeout int32, objects *metav1.LabelSelector) *admissionregistrationv1.ValidatingWebhookConfiguration {
		c := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + run},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: name + ".kapi.test",
				ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &target, CABundle: ca}, Rules: cmRule(admissionregistrationv1.Create),
				FailurePolicy: policy, NamespaceSelector: scope, ObjectSelector: objects, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}, TimeoutSeconds: &timeout}}}
		if _, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, sc := range []struct {
		name, target string
		policy       *admissionregistrationv1.FailurePolicyType
		timeout      int32
		objects      *metav1.LabelSelector
		labels       map[string]string
	}{
		{"down-fail", down, &fail, 10, nil, nil},
		{"hang-fail", hooks + "/hang", &fail, 1, nil, nil},
		{"guard", down, &fail, 10, &metav1.LabelSelector{MatchLabels: map[string]string{"guarded": "true"}}, map[string]string{"guarded": "true"}},
		{"garbage", hooks + "/garbage", &fail, 10, nil, nil},
		{"wrong-uid", hooks + "/wronguid", &fail, 10, nil, nil},
	} {
		c := one(t, sc.name, sc.target, sc.policy, sc.timeout, sc.objects)
		until(sc.name+" to take effect", func() bool { _, err := probe("probe", nil, sc.labels); return err != nil })
		_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: sc.name, Labels: sc.labels}}, metav1.CreateOptions{})
		out[sc.name] = answerOf(err)
		if sc.objects != nil {
			_, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: sc.name + "-unlabelled"}}, metav1.CreateOptions{})
			out[sc.name+" unselected"] = answerOf(err)
		}
		deleteValidating(c.Name)
		n := 0
		until(sc.name+" to be gone", func() bool {
			_, err := probe("probe", nil, sc.labels)
			if n++; err != nil && n == 20 {
				t.Logf("%s: probe: %v", sc.name, err)
			}
			return err == nil
		})
	}
	// matchConditions (CEL): the webhook is called only where they hold;
	// one that does not compile is refused.
	cc := one(t, "cel", down, &fail, 10, nil)
	cc.Webhooks[0].MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "only-cel-hit", Expression: "object.metadata.name == 'cel-hit'"}}
	cur, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, cc.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Webhooks[0].MatchConditions = cc.Webhooks[0].MatchConditions
	if _, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	until("the match conditions to take effect", func() bool { _, err := probe("probe", nil, nil); return err == nil })
	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cel-hit"}}, metav1.CreateOptions{})
	out["matchConditions hit"] = answerOf(err)
	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cel-miss"}}, metav1.CreateOptions{})
	out["matchConditions miss"] = answerOf(err)
	cur, _ = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, cc.Name, metav1.GetOptions{})
	cur.Webhooks[0].MatchConditions = append(cur.Webhooks[0].MatchConditions, admissionregistrationv1.MatchCondition{Name: "bad", Expression: "object.metadata.name"})
	_, err = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Update(ctx, cur, metav1.UpdateOptions{})
	out["matchConditions invalid"] = answerOf(err)
	deleteValidating(cc.Name)
	until("cel to be gone", func() bool { _, err := probe("cel-hit", nil, nil); return err == nil })

	// A patch that does not apply.
	bad := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "kapi-badpatch-" + run},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "badpatch.kapi.test", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: url("/badpatch"), CABundle: ca},
			Rules: cmRule(admissionregistrationv1.Create), NamespaceSelector: scope, SideEffects: &none, AdmissionReviewVersions: []string{"v1"}, FailurePolicy: &ignore}}}
	if _, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, bad, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	until("badpatch to take effect", func() bool { _, err := probe("probe", nil, nil); return err != nil })
	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "badpatch"}}, metav1.CreateOptions{})
	out["patch that does not apply (failurePolicy Ignore)"] = answerOf(err)
	_ = cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(context.Background(), bad.Name, metav1.DeleteOptions{})
	until("badpatch to be gone", func() bool { _, err := probe("probe", nil, nil); return err == nil })

	c := one(t, "down-ignore", down, &ignore, 10, nil)
	_, err = cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ignored"}}, metav1.CreateOptions{})
	out["down-ignore"] = answerOf(err)
	deleteValidating(c.Name)
	return out
}

// warningLog keeps the warnings client-go receives.
type warningLog struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warningLog) HandleWarningHeader(_ int, _ string, msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, msg)
}

func (w *warningLog) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}
