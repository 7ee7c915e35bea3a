package conformance

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
)

// Authentication as users configure it (issue 17): kubectl with a bearer
// token from kube's token file, with a client certificate over TLS, and
// without credentials; whoami, can-i and impersonation.

// tokenFile is a --token-auth-file of two users.
const tokenFile = `admin-token,admin,uid-admin,"system:masters"
alice-token,alice,uid-alice,"dev,qa"
`

// authServer starts the example server with auth (its TokenAuthFile set
// to tokenFile's when empty and tokens are wanted) over TLS, asking for
// client certificates; it returns the server and the CA of its serving
// certificate.
func authServer(t *testing.T, auth server.Auth) (*httptest.Server, []byte) {
	srv, ca, _ := authServerLog(t, auth)
	return srv, ca
}

// authServerLog is authServer with the log of the requests it answered.
func authServerLog(t *testing.T, auth server.Auth) (*httptest.Server, []byte, *requestLog) {
	t.Helper()
	reg, err := server.New(withStorage(t, server.Options{Auth: auth}))
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	cert, caPEM, err := server.SelfSignedCert("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	log := &requestLog{}
	srv := httptest.NewUnstartedServer(log.wrap(reg))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequestClientCert}
	srv.StartTLS()
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	return srv, caPEM, log
}

func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// kubectlAs is kubectl with a kubeconfig presenting creds.
func kubectlAs(t *testing.T, url string, creds server.Credentials) *kubectl {
	t.Helper()
	dir := t.TempDir()
	return &kubectl{kubeconfig: writeTemp(t, "kubeconfig", server.KubeconfigFor(url, creds)), cacheDir: filepath.Join(dir, "cache")}
}

func TestKubectlBearerToken(t *testing.T) {
	srv, ca := authServer(t, server.Auth{TokenAuthFile: writeTemp(t, "tokens.csv", []byte(tokenFile)), DisableAnonymous: true})

	alice := kubectlAs(t, srv.URL, server.Credentials{Token: "alice-token", CertificateAuthPEM: ca})
	out := alice.mustRun(t, "auth", "whoami")
	for _, want := range []string{"alice", "uid-alice", "[dev qa system:authenticated]"} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl auth whoami: got\n%s\nwant %q in it", out, want)
		}
	}
	alice.mustRun(t, "create", "configmap", "c1", "--from-literal=a=b")
	if out := alice.mustRun(t, "get", "configmap", "c1", "-o", "jsonpath={.data.a}"); out != "b" {
		t.Errorf("kubectl get configmap: got %q; want b", out)
	}
	if out := strings.TrimSpace(alice.mustRun(t, "auth", "can-i", "create", "widgets")); out != "yes" {
		t.Errorf("kubectl auth can-i (AlwaysAllow): got %q; want yes", out)
	}

	// kubectl's words for kube's 401.
	_, stderr, err := kubectlAs(t, srv.URL, server.Credentials{Token: "nope", CertificateAuthPEM: ca}).run("get", "configmaps")
	if err == nil || !strings.Contains(err.Error()+stderr, "You must be logged in to the server") {
		t.Errorf("unknown token: got err %v, stderr %s; want kubectl's 401", err, stderr)
	}
	// Without credentials kubectl would prompt for a password; client-go
	// sends the request as is.
	cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
	_, err = kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps("default").List(testContext(t), metav1.ListOptions{})
	if !apierrors.IsUnauthorized(err) || err.Error() != "Unauthorized" {
		t.Errorf("no credentials: got %v; want kube's 401 Unauthorized", err)
	}
}

func TestKubectlImpersonation(t *testing.T) {
	srv, ca, log := authServerLog(t, server.Auth{TokenAuthFile: writeTemp(t, "tokens.csv", []byte(tokenFile))})
	admin := kubectlAs(t, srv.URL, server.Credentials{Token: "admin-token", CertificateAuthPEM: ca})
	out := admin.mustRun(t, "auth", "whoami", "--as=carol", "--as-group=g1", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}")
	if out != `carol ["g1","system:authenticated"]` {
		t.Errorf("kubectl auth whoami --as=carol --as-group=g1: got %q", out)
	}
	// Without credentials, anonymous on (client-go: kubectl would prompt).
	cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
	ssr, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(testContext(t), &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || ssr.Status.UserInfo.Username != "system:anonymous" || strings.Join(ssr.Status.UserInfo.Groups, ",") != "system:unauthenticated" {
		t.Errorf("SelfSubjectReview without credentials, anonymous on: got %+v, %v", ssr, err)
	}
	// kubectl and the typed client, in their default configuration, speak
	// protobuf to the review resources.
	reviews := log.matching(func(r request) bool { return r.Method == "POST" && strings.HasSuffix(r.Path, "/selfsubjectreviews") })
	for _, r := range reviews {
		if r.Status != 201 || r.ContentType != "application/vnd.kubernetes.protobuf" {
			t.Errorf("%v; want 201 in protobuf", r)
		}
	}
	if len(reviews) != 2 {
		t.Errorf("got %d SelfSubjectReviews; want 2", len(reviews))
	}
}

func TestKubectlClientCertificate(t *testing.T) {
	ca, caKey := newCA(t)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})
	srv, serving := authServer(t, server.Auth{ClientCAFile: writeTemp(t, "ca.pem", caPEM), DisableAnonymous: true})

	certPEM, keyPEM := newClientCert(t, ca, caKey, "bob", "dev", "ops")
	bob := kubectlAs(t, srv.URL, server.Credentials{ClientCertPEM: certPEM, ClientKeyPEM: keyPEM, CertificateAuthPEM: serving})
	out := bob.mustRun(t, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}")
	if out != `bob ["dev","ops","system:authenticated"]` {
		t.Errorf("kubectl auth whoami with a client certificate: got %q", out)
	}

	other, otherKey := newCA(t)
	certPEM, keyPEM = newClientCert(t, other, otherKey, "mallory")
	_, stderr, err := kubectlAs(t, srv.URL, server.Credentials{ClientCertPEM: certPEM, ClientKeyPEM: keyPEM, CertificateAuthPEM: serving}).run("get", "configmaps")
	if err == nil || !strings.Contains(err.Error()+stderr, "You must be logged in to the server") {
		t.Errorf("a certificate of another CA: got err %v, stderr %s; want 401 Unauthorized", err, stderr)
	}
}

func newCA(t *testing.T) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return cert, key
}

func newClientCert(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, user string, groups ...string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: user, Organization: groups},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

// TestFrontProxyHeaders: a front proxy's X-Remote-* headers name the user
// when its client certificate chains to the request-header CA and has an
// allowed name, and only then (EXT-3, EXT-6's authentication).
func TestFrontProxyHeaders(t *testing.T) {
	proxyCA, proxyKey := newCA(t)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: proxyCA.Raw})
	srv, serving := authServer(t, server.Auth{RequestHeaderClientCAFile: writeTemp(t, "proxy-ca.pem", caPEM),
		RequestHeaderAllowedNames: []string{"front-proxy-client"}, DisableAnonymous: true})
	whoami := func(certPEM, keyPEM []byte) (*authnv1.SelfSubjectReview, error) {
		cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: serving, CertData: certPEM, KeyData: keyPEM}}
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
			return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
				req = req.Clone(req.Context())
				req.Header.Set("X-Remote-User", "dana")
				req.Header.Add("X-Remote-Group", "dev")
				req.Header.Add("X-Remote-Group", "ops")
				req.Header.Set("X-Remote-Extra-Acme.com%2Fproject", "kapi")
				return rt.RoundTrip(req)
			})
		})
		return kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(testContext(t), &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	}
	certPEM, keyPEM := newClientCert(t, proxyCA, proxyKey, "front-proxy-client")
	ssr, err := whoami(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	u := ssr.Status.UserInfo
	if u.Username != "dana" || strings.Join(u.Groups, ",") != "dev,ops,system:authenticated" || strings.Join(u.Extra["acme.com/project"], ",") != "kapi" {
		t.Errorf("through the proxy: got %+v", u)
	}
	// Another name, or another CA: the headers are not trusted.
	certPEM, keyPEM = newClientCert(t, proxyCA, proxyKey, "someone-else")
	if _, err := whoami(certPEM, keyPEM); !apierrors.IsUnauthorized(err) {
		t.Errorf("a proxy certificate with a name not allowed: got %v; want 401", err)
	}
	other, otherKey := newCA(t)
	certPEM, keyPEM = newClientCert(t, other, otherKey, "front-proxy-client")
	if _, err := whoami(certPEM, keyPEM); !apierrors.IsUnauthorized(err) {
		t.Errorf("a proxy certificate of another CA: got %v; want 401", err)
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
