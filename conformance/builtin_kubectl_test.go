package conformance

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
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
		{"-n", ns, "set", "image", "deployment/web", "nginx=nginx:1.28"},
		{"-n", ns, "scale", "deployment/web", "--replicas=3"},
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

	// Output that must read the same (ages and addresses masked).
	same := [][]string{
		{"explain", "pod.spec.containers"},
		{"explain", "deployment.spec.progressDeadlineSeconds"},
		{"explain", "service.spec.ports"},
		{"explain", "job.spec.completions"},
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
		{"-n", ns, "get", "pvc"},
		{"-n", ns, "get", "ingresses"},
		{"-n", ns, "get", "statefulsets,daemonsets,replicationcontrollers"},
		{"-n", ns, "get", "deployment", "web", "-o", "jsonpath={.spec.template.spec.containers[0].image} {.spec.replicas} {.metadata.generation}"},
		{"-n", ns, "get", "secret", "t", "-o", "jsonpath={.type}"},
	}
	for _, c := range same {
		t.Run(strings.Join(c, " "), func(t *testing.T) {
			var outs []string
			for _, s := range sides {
				out, stderr, err := s.k.run(c...)
				if err != nil {
					t.Fatalf("%s: %v\n%s", s.name, err, stderr)
				}
				if c[0] == "explain" {
					out = maskExplain(out)
				}
				outs = append(outs, maskKubectl(out))
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

var (
	explainType  = regexp.MustCompile(`<(\[\])?(map\[string\])?[A-Z][A-Za-z0-9]*>`)
	explainEnum  = regexp.MustCompile(`(?m)^ *enum: .*\n`)
	explainEnums = regexp.MustCompile(`\n *\n *Possible enum values:\n( *- .*\n( +[^ -].*\n)*)*`)
)

// maskExplain masks what kapi's OpenAPI documents do not have (README):
// the names of definitions (kapi inlines them: "<Object>" where kube says
// "<Container>") and the enums, which kube-apiserver adds to what
// k8s.io/kubernetes commits (the source of kapi's schemas). (Explaining a
// field of an object type, kube prints the type's description after the
// field's; kapi only the field's: the commands above explain lists and
// scalars.)
func maskExplain(s string) string {
	s = explainEnum.ReplaceAllString(s, "")
	s = explainEnums.ReplaceAllString(s, "\n")
	s = explainType.ReplaceAllStringFunc(s, func(m string) string {
		for _, scalar := range []string{"<string>", "<integer>", "<boolean>", "<number>", "<Object>", "<[]Object>", "<[]string>", "<map[string]string>", "<[]integer>"} {
			if m == scalar {
				return m
			}
		}
		if strings.HasPrefix(m, "<[]") {
			return "<[]Object>"
		}
		if strings.HasPrefix(m, "<map[string]") {
			return "<map[string]Object>"
		}
		return "<Object>"
	})
	return strings.TrimRight(s, "\n")
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
