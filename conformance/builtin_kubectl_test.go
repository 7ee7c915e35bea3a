package conformance

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
)

// kubectl on the built-in kinds, in its default configuration, beside
// the real kube-apiserver: the same commands on both, and what kubectl
// prints compared where it depends on the server (explain's field docs,
// get's columns).
func TestBuiltinKindsKubectlAsKube(t *testing.T) {
	kube := kubeAPIServer(t)
	e := newEnv(t)
	sides := []struct {
		name string
		k    *kubectl
	}{
		{"kube-apiserver", kubectlAs(t, kube.URL, server.Credentials{Token: "admin-token", CertificateAuthPEM: kube.CA})},
		{"kapi", newKubectl(t, e)},
	}
	// kube-apiserver publishes its OpenAPI v3 documents a few seconds
	// after /readyz passes (explain fetches them): wait for the core
	// group's, bounded, before comparing.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		_, stderr, err := sides[0].k.run("get", "--raw", "/openapi/v3/api/v1")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kube-apiserver's /openapi/v3/api/v1: %v\n%s", err, stderr)
		}
	}
	ns := fmt.Sprintf("kubectl-builtin-%d", builtinKubeRuns.Add(1))
	crt, key := selfSigned(t)
	crtFile, keyFile := writeTemp(t, "tls.crt", crt), writeTemp(t, "tls.key", key)
	manifests := writeTemp(t, "more.yaml", []byte(`apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: leader}
spec: {holderIdentity: web-1, leaseDurationSeconds: 15}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
spec: {rules: [{host: example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]}
`))
	events := writeTemp(t, "events.yaml", []byte(fmt.Sprintf(`apiVersion: v1
kind: Event
metadata: {name: p.pulled, labels: {api: core}}
involvedObject: {kind: Pod, name: p, namespace: %[1]s, fieldPath: "spec.containers{p}"}
reason: Pulled
message: "Container image pulled "
type: Normal
source: {component: kubelet, host: node-1}
firstTimestamp: "2026-01-01T00:00:00Z"
lastTimestamp: "2026-01-01T00:05:00Z"
count: 3
---
apiVersion: v1
kind: Event
metadata: {name: p.scheduled, labels: {api: core}}
involvedObject: {kind: Pod, name: p, namespace: %[1]s}
reason: Scheduled
message: Assigned
type: Normal
firstTimestamp: "2026-01-02T00:00:00Z"
---
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: web.scaled, labels: {api: events}}
eventTime: "2026-01-03T00:00:00.000000Z"
reportingController: example.com/scaler
reportingInstance: scaler-1
action: Scale
reason: Scaled
regarding: {kind: Deployment, name: web, namespace: %[1]s}
note: Scaled up
type: Normal
series: {count: 2, lastObservedTime: "2026-01-03T00:10:00.000000Z"}
`, ns)))
	// A CertificateSigningRequest (cluster-scoped: named after the run),
	// approved as a cluster admin approves one.
	csrName := ns + "-csr"
	csr := writeTemp(t, "csr.yaml", []byte(fmt.Sprintf(`apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: %s}
spec: {request: %s, signerName: example.com/signer, usages: [client auth], expirationSeconds: 86400}
`, csrName, base64.StdEncoding.EncodeToString(csrPEM()))))

	// Commands a new user runs, in order; each must succeed on both.
	commands := [][]string{
		{"create", "namespace", ns},
		{"-n", ns, "create", "serviceaccount", "default"},
		{"-n", ns, "create", "deployment", "web", "--image=nginx:1.27", "--replicas=2", "--port=80"},
		{"-n", ns, "run", "p", "--image=busybox:1.36", "--restart=Never", "--labels=app=p"},
		{"-n", ns, "create", "secret", "generic", "s", "--from-literal=a=b"},
		{"-n", ns, "create", "secret", "tls", "t", "--cert=" + crtFile, "--key=" + keyFile},
		{"-n", ns, "create", "secret", "docker-registry", "r", "--docker-server=registry.example.com", "--docker-username=u", "--docker-password=p"},
		{"-n", ns, "create", "serviceaccount", "sa"},
		{"-n", ns, "create", "token", "sa"},
		{"-n", ns, "expose", "deployment", "web", "--port=80", "--target-port=8080"},
		{"-n", ns, "create", "job", "j", "--image=busybox:1.36"},
		{"-n", ns, "create", "cronjob", "cj", "--image=busybox:1.36", "--schedule=*/5 * * * *"},
		{"-n", ns, "apply", "-f", manifests},
		{"-n", ns, "apply", "-f", events},
		{"-n", ns, "set", "image", "deployment/web", "nginx=nginx:1.28"},
		{"-n", ns, "scale", "deployment/web", "--replicas=3"},
		{"apply", "-f", csr},
		{"certificate", "approve", csrName},
		{"-n", ns, "get", "all"},
		{"-n", ns, "describe", "pod", "p"},
		{"-n", ns, "describe", "deployment", "web"},
		{"-n", ns, "describe", "service", "web"},
	}
	for _, c := range commands {
		for _, s := range sides {
			if _, stderr, err := s.k.run(c...); err != nil {
				t.Fatalf("%s: kubectl %s: %v\n%s", s.name, strings.Join(c, " "), err, stderr)
			}
		}
	}

	// Output that must read the same (ages and addresses masked); explain
	// prints the type names (<PodSpec>), enums and the types'
	// descriptions of kube's OpenAPI definitions.
	same := [][]string{
		{"explain", "pod.spec.containers"},
		{"explain", "deployment.spec.progressDeadlineSeconds"},
		{"explain", "service.spec.ports"},
		{"explain", "job.spec.completions"},
		{"explain", "pod"},
		{"explain", "pod.spec"},
		{"explain", "pod.spec", "--recursive"},
		{"explain", "pod.spec.containers.imagePullPolicy"},
		{"explain", "service.spec.type"},
		{"explain", "deployment.spec.strategy"},
		{"explain", "persistentvolumeclaim.spec.accessModes"},
		{"explain", "namespace.spec"},
		{"explain", "configmap"},
		{"explain", "lease.spec"},
		{"explain", "event"},
		{"explain", "role.rules"},
		{"explain", "clusterrolebinding.roleRef"},
		{"explain", "validatingwebhookconfiguration.webhooks.failurePolicy"},
		{"-n", ns, "get", "pods"},
		{"-n", ns, "get", "pods", "-o", "wide"},
		{"-n", ns, "get", "deployments"},
		{"-n", ns, "get", "deployments", "-o", "wide"},
		{"-n", ns, "get", "replicasets", "-o", "wide"},
		{"-n", ns, "get", "services"},
		{"-n", ns, "get", "services", "-o", "wide"},
		{"-n", ns, "get", "jobs", "-o", "wide"},
		{"-n", ns, "get", "cronjobs"},
		{"-n", ns, "get", "secrets"},
		{"-n", ns, "get", "serviceaccounts"},
		{"-n", ns, "get", "leases"},
		// kube serves one store of events in both groups, kapi two
		// (README): each group is compared on the events written to it.
		{"-n", ns, "get", "events", "-l", "api=core", "--sort-by=.metadata.name"},
		{"-n", ns, "get", "events", "-l", "api=core", "-o", "wide", "--sort-by=.metadata.name"},
		{"-n", ns, "get", "events.events.k8s.io", "-l", "api=events", "-o", "wide"},
		{"-n", ns, "get", "pvc"},
		{"-n", ns, "get", "ingresses"},
		{"-n", ns, "get", "statefulsets,daemonsets,replicationcontrollers"},
		{"-n", ns, "get", "deployment", "web", "-o", "jsonpath={.spec.template.spec.containers[0].image} {.spec.replicas} {.metadata.generation}"},
		{"-n", ns, "get", "secret", "t", "-o", "jsonpath={.type}"},
		// (get csr's REQUESTOR is the user, admin on one side and
		// anonymous on the other here: the corpus compares the Table,
		// builtin-certificates.yaml.)
		{"get", "csr", csrName, "-o", "jsonpath={.spec.signerName} {.status.conditions[0].type} {.status.conditions[0].reason} {.status.conditions[0].message}"},
		{"explain", "csr.spec.signerName"},
	}
	for _, c := range same {
		t.Run(strings.Join(c, " "), func(t *testing.T) {
			var outs []string
			for _, s := range sides {
				out, stderr, err := s.k.runPast503(c...)
				if err != nil {
					t.Fatalf("%s: %v\n%s", s.name, err, stderr)
				}
				outs = append(outs, maskKubectl(strings.TrimRight(out, "\n")))
			}
			if outs[0] != outs[1] {
				t.Errorf("kubectl %s:\nkube-apiserver:\n%s\nkapi:\n%s", strings.Join(c, " "), outs[0], outs[1])
			}
		})
	}
}

var (
	kubectlAge = regexp.MustCompile(`\b\d+(s|m|h|d|y)(\d+(s|m|h))?\b`)
	kubectlIP  = regexp.MustCompile(`\b\d+\.\d+\.\d+\.\d+\b`)
	kubectlUID = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	kubectlPad = regexp.MustCompile(` {2,}`)
)

// maskKubectl masks ages, addresses and uids, and column padding (which
// follows their widths).
func maskKubectl(s string) string {
	s = kubectlUID.ReplaceAllString(s, "<uid>")
	s = kubectlIP.ReplaceAllString(s, "<ip>")
	s = kubectlAge.ReplaceAllString(s, "<age>")
	return kubectlPad.ReplaceAllString(s, "  ")
}

func selfSigned(t *testing.T) (crt, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "example.com"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}
