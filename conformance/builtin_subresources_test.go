package conformance

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
)

// The built-in subresources that write, through the typed clientset
// (protobuf bodies): pods/binding, pods/eviction,
// serviceaccounts/token, whose token the server's authenticator accepts
// as the service account, jobs/status, and a CertificateSigningRequest's
// approval and status.
func TestBuiltinSubresources(t *testing.T) {
	t.Parallel()
	srv, ca := authServer(t, server.Auth{TokenAuthFile: writeTemp(t, "tokens.csv", []byte(refTokens))})
	as := func(token string) *kubernetes.Clientset {
		cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: ca}, QPS: -1})
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	admin := as("admin-token")
	ctx := testContext(t)
	const ns = "default"

	t.Run("binding", func(t *testing.T) {
		pods := admin.CoreV1().Pods(ns)
		if _, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: om("bound"), Spec: podSpec()}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		b := &corev1.Binding{ObjectMeta: om("bound"), Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}
		if err := pods.Bind(ctx, b, metav1.CreateOptions{}); err != nil {
			t.Fatalf("bind: %v", err)
		}
		p, err := pods.Get(ctx, "bound", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		scheduled := slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
			return c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue
		})
		if p.Spec.NodeName != "node-1" || !scheduled {
			t.Errorf("bound pod: nodeName %q, PodScheduled %v; want node-1 and true", p.Spec.NodeName, scheduled)
		}
		if err := pods.Bind(ctx, b, metav1.CreateOptions{}); !apierrors.IsConflict(err) {
			t.Errorf("bind twice: got %v; want Conflict", err)
		}
		// A plain update may not move it.
		p.Spec.NodeName = "node-2"
		if _, err := pods.Update(ctx, p, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("update nodeName: got %v; want Invalid", err)
		}
		// Deleted, a pod bound to a node stays, terminating, until a
		// delete with gracePeriodSeconds=0 (the kubelet's) removes it.
		if err := pods.Delete(ctx, "bound", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete: %v", err)
		}
		p, err = pods.Get(ctx, "bound", metav1.GetOptions{})
		if err != nil || p.DeletionTimestamp == nil || p.DeletionGracePeriodSeconds == nil || *p.DeletionGracePeriodSeconds != 30 {
			t.Fatalf("bound pod after delete: %v, %v; want it terminating with a 30 s grace period", p, err)
		}
		zero := int64(0)
		if err := pods.Delete(ctx, "bound", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Fatalf("delete with grace period 0: %v", err)
		}
		if _, err := pods.Get(ctx, "bound", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get after the delete with grace period 0: got %v; want NotFound", err)
		}
	})

	t.Run("eviction", func(t *testing.T) {
		pods := admin.CoreV1().Pods(ns)
		if _, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: om("evicted"), Spec: podSpec()}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := admin.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "evicted", Namespace: ns}}); err != nil {
			t.Fatalf("evict: %v", err)
		}
		if _, err := pods.Get(ctx, "evicted", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get evicted pod: got %v; want NotFound", err)
		}
	})

	t.Run("eviction with a disruption budget", func(t *testing.T) {
		pods := admin.CoreV1().Pods(ns)
		labels := map[string]string{"app": "guarded"}
		p, err := pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "guarded", Labels: labels}, Spec: podSpec()}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Status.Phase = corev1.PodRunning // as a kubelet would
		if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		pdbs := admin.PolicyV1().PodDisruptionBudgets(ns)
		pdb, err := pdbs.Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: om("guard"), Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptrTo(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// As kube, a refused eviction asks the client to retry in 10s
		// (Retry-After): client-go would wait and retry, so these requests
		// are sent once.
		evict := func() error {
			return admin.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name("guarded").SubResource("eviction").
				Body(&policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "guarded", Namespace: ns}}).MaxRetries(0).Do(ctx).Error()
		}
		// The disruption controller (not kapi's) has not observed it yet.
		if err := evict(); !apierrors.IsTooManyRequests(err) {
			t.Fatalf("evict before the budget is observed: got %v; want TooManyRequests", err)
		} else if d, ok := apierrors.SuggestsClientDelay(err); !ok || d != 10 {
			t.Errorf("evict before the budget is observed: retry after %d (%v); want 10", d, ok)
		}
		setStatus := func(allowed int32) {
			pdb, err = pdbs.Get(ctx, "guard", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DisruptionsAllowed: allowed, CurrentHealthy: 1 + allowed, DesiredHealthy: 1, ExpectedPods: 1}
			if pdb, err = pdbs.UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		setStatus(0)
		if err := evict(); !apierrors.IsTooManyRequests(err) {
			t.Fatalf("evict with no disruption allowed: got %v; want TooManyRequests", err)
		}
		setStatus(1)
		if err := evict(); err != nil {
			t.Fatalf("evict with one disruption allowed: %v", err)
		}
		if _, err := pods.Get(ctx, "guarded", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get evicted pod: got %v; want NotFound", err)
		}
		got, err := pdbs.Get(ctx, "guard", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := got.Status.DisruptedPods["guarded"]; got.Status.DisruptionsAllowed != 0 || !ok {
			t.Errorf("budget after the eviction: allowed %d, disrupted %v; want 0 and the pod", got.Status.DisruptionsAllowed, got.Status.DisruptedPods)
		}
	})

	t.Run("token", func(t *testing.T) {
		sas := admin.CoreV1().ServiceAccounts(ns)
		sa, err := sas.Create(ctx, &corev1.ServiceAccount{ObjectMeta: om("robot")}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := sas.CreateToken(ctx, "robot", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptrTo(int64(600))}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create token: %v", err)
		}
		if tr.Status.Token == "" || tr.Status.ExpirationTimestamp.Time.IsZero() {
			t.Fatalf("token request status: %+v; want a token and its expiry", tr.Status)
		}
		if _, err := sas.CreateToken(ctx, "robot", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptrTo(int64(60))}}, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("token for 60s: got %v; want Invalid (at least 10 minutes)", err)
		}
		ssr, err := as(tr.Status.Token).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("self subject review with the token: %v", err)
		}
		u := ssr.Status.UserInfo
		if u.Username != "system:serviceaccount:default:robot" || u.UID != string(sa.UID) ||
			!slices.Contains(u.Groups, "system:serviceaccounts") || !slices.Contains(u.Groups, "system:serviceaccounts:default") {
			t.Errorf("token's user: %+v; want system:serviceaccount:default:robot, uid %s, in system:serviceaccounts and system:serviceaccounts:default", u, sa.UID)
		}
		if _, err := as(tr.Status.Token+"x").CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsUnauthorized(err) {
			t.Errorf("a tampered token: got %v; want Unauthorized", err)
		}
	})

	// jobs/status through UpdateStatus (protobuf): kube 1.37's status
	// rules refuse a Complete Job without its times and
	// SuccessCriteriaMet, and take it with them.
	t.Run("job status", func(t *testing.T) {
		jobs := admin.BatchV1().Jobs(ns)
		spec := podSpec()
		spec.RestartPolicy = corev1.RestartPolicyNever
		j, err := jobs.Create(ctx, &batchv1.Job{ObjectMeta: om("done"), Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: spec}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		now := metav1.Now()
		complete := batchv1.JobCondition{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now}
		j.Status.Conditions = []batchv1.JobCondition{complete}
		j.Status.Succeeded = 1
		_, err = jobs.UpdateStatus(ctx, j, metav1.UpdateOptions{})
		if !apierrors.IsInvalid(err) {
			t.Fatalf("Complete without times: got %v; want Invalid", err)
		}
		var fields []string
		if se, ok := err.(apierrors.APIStatus); ok && se.Status().Details != nil {
			for _, c := range se.Status().Details.Causes {
				fields = append(fields, c.Field)
			}
		}
		for _, f := range []string{"status.completionTime", "status.startTime", "status.conditions"} {
			if !slices.Contains(fields, f) {
				t.Errorf("causes %v: missing %s", fields, f)
			}
		}
		j.Status.StartTime, j.Status.CompletionTime = &now, &now
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now}, complete}
		got, err := jobs.UpdateStatus(ctx, j, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("Complete with its times and SuccessCriteriaMet: %v", err)
		}
		if got.Status.CompletionTime == nil || len(got.Status.Conditions) != 2 {
			t.Errorf("stored status: completionTime %v, %d conditions; want set and 2", got.Status.CompletionTime, len(got.Status.Conditions))
		}
	})

	// A CSR through the typed clientset (protobuf): created (the
	// requestor is who sends it), approved with UpdateApproval as
	// kubectl certificate approve does, its certificate written with
	// UpdateStatus as a signer does, read back.
	t.Run("csr approval and certificate", func(t *testing.T) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice"}}, key)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "alice"}}
		cder, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			t.Fatal(err)
		}
		cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cder})
		csrs := admin.CertificatesV1().CertificateSigningRequests()
		expiry := int32(3600)
		c, err := csrs.Create(ctx, &certificatesv1.CertificateSigningRequest{ObjectMeta: om("typed-csr"), Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: "example.com/signer", Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}, ExpirationSeconds: &expiry,
			Username: "root", Extra: map[string]certificatesv1.ExtraValue{"a": {"b"}},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c.Spec.Username != "admin" || c.Spec.UID != "uid-admin" || !slices.Contains(c.Spec.Groups, "system:masters") || c.Spec.Extra != nil {
			t.Errorf("requestor %q %q %v %v; want admin's, no extra", c.Spec.Username, c.Spec.UID, c.Spec.Groups, c.Spec.Extra)
		}
		c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "KubectlApprove", Message: "This CSR was approved by kubectl certificate approve.",
		})
		c.Status.Certificate = cert // /approval keeps the stored (empty) certificate
		c, err = csrs.UpdateApproval(ctx, c.Name, c, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("approve: %v", err)
		}
		if len(c.Status.Conditions) != 1 || c.Status.Conditions[0].LastUpdateTime.IsZero() || c.Status.Certificate != nil {
			t.Errorf("approved: conditions %v, certificate %d bytes; want Approved with its time, none", c.Status.Conditions, len(c.Status.Certificate))
		}
		c.Status.Certificate = cert
		if _, err := csrs.UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("certificate: %v", err)
		}
		got, err := csrs.Get(ctx, c.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Status.Certificate, cert) || len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Type != certificatesv1.CertificateApproved || *got.Spec.ExpirationSeconds != expiry {
			t.Errorf("read back: certificate %d bytes, conditions %v, expiration %v; want the certificate, Approved, 3600", len(got.Status.Certificate), got.Status.Conditions, got.Spec.ExpirationSeconds)
		}
		got.Status.Conditions = append(got.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateDenied, Status: corev1.ConditionTrue})
		if _, err := csrs.UpdateApproval(ctx, got.Name, got, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
			t.Errorf("approve and deny: got %v; want Invalid", err)
		}
	})
}

// The field selectors kube's kinds support: pods by node and phase,
// events by involved object (kubectl describe's), secrets by type.
func TestBuiltinFieldSelectors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testContext(t)
	cs := newClientset(t, e)
	ns := e.namespace(t, "selectors")
	for _, p := range []*corev1.Pod{
		{ObjectMeta: om("on-a"), Spec: corev1.PodSpec{NodeName: "a", Containers: podSpec().Containers}},
		{ObjectMeta: om("on-b"), Spec: corev1.PodSpec{NodeName: "b", Containers: podSpec().Containers}},
	} {
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ev := &corev1.Event{ObjectMeta: om("ev"), InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "on-a", Namespace: ns}, Reason: "Pulled", Type: "Normal"}
	if _, err := cs.CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, selector string
		list           func(metav1.ListOptions) ([]string, error)
		want           []string
	}{
		{"pods on node a", "spec.nodeName=a", podNames(t, cs, ns), []string{"on-a"}},
		{"pods Pending", "status.phase=Pending", podNames(t, cs, ns), []string{"on-a", "on-b"}},
		{"events of on-a", "involvedObject.name=on-a,involvedObject.kind=Pod", func(o metav1.ListOptions) ([]string, error) {
			l, err := cs.CoreV1().Events(ns).List(ctx, o)
			if err != nil {
				return nil, err
			}
			var out []string
			for _, e := range l.Items {
				out = append(out, e.Name)
			}
			return out, nil
		}, []string{"ev"}},
	} {
		got, err := tt.list(metav1.ListOptions{FieldSelector: tt.selector})
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%s (%s): got %v, %v; want %v", tt.name, tt.selector, got, err, tt.want)
		}
	}
}

func podNames(t *testing.T, cs *kubernetes.Clientset, ns string) func(metav1.ListOptions) ([]string, error) {
	return func(o metav1.ListOptions) ([]string, error) {
		l, err := cs.CoreV1().Pods(ns).List(testContext(t), o)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, p := range l.Items {
			out = append(out, p.Name)
		}
		return out, nil
	}
}

// A patch whose result a Deployment's Go types cannot hold, sent by the
// typed clientset as a user writes it: kube's 422 on field "patch", with
// encoding/json's error (merge patch) or the unstructured converter's
// (strategic merge patch), on /status too; the stored object unchanged.
func TestWronglyTypedPatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cs, err := kubernetes.NewForConfig(e.config())
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	deps := cs.AppsV1().Deployments("default")
	d := &appsv1.Deployment{ObjectMeta: om("typed-patch"), Spec: appsv1.DeploymentSpec{Replicas: ptrTo(int32(1)),
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}}, Spec: podSpec()}}}
	if _, err := deps.Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		pt   types.PatchType
		sub  []string
		want string
	}{
		{"merge", types.MergePatchType, nil, "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"},
		{"strategic", types.StrategicMergePatchType, nil, `Invalid value: "map[spec:map[replicas:x]]": unrecognized type: int32`},
		{"status merge", types.MergePatchType, []string{"status"}, "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"},
		{"status strategic", types.StrategicMergePatchType, []string{"status"}, `Invalid value: "map[spec:map[replicas:x]]": unrecognized type: int32`},
	}
	for _, tt := range tests {
		_, err := deps.Patch(ctx, "typed-patch", tt.pt, []byte(`{"spec":{"replicas":"x"}}`), metav1.PatchOptions{}, tt.sub...)
		var se *apierrors.StatusError
		if !apierrors.IsInvalid(err) || !errors.As(err, &se) || !strings.Contains(err.Error(), tt.want) ||
			se.ErrStatus.Details == nil || len(se.ErrStatus.Details.Causes) != 1 || se.ErrStatus.Details.Causes[0].Field != "patch" {
			t.Errorf("%s: got %v; want 422 on field patch with %q", tt.name, err, tt.want)
		}
	}
	if got, err := deps.Get(ctx, "typed-patch", metav1.GetOptions{}); err != nil || *got.Spec.Replicas != 1 || got.Generation != 1 {
		t.Errorf("stored: got %v, %v; want the Deployment unchanged", got, err)
	}
	if reqs := e.log.matching(func(r request) bool { return r.Method == "POST" }); len(reqs) == 0 || reqs[0].ContentType != "application/vnd.kubernetes.protobuf" {
		t.Errorf("the typed client's create: %v; want protobuf", reqs)
	}
}
