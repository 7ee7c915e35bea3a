package authn

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// testCert is a certificate the tests made, with its key.
type testCert struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

var serial atomic.Int64

// certSpec describes a certificate for newCert.
type certSpec struct {
	subject   pkix.Name
	ca        bool               // a CA that may sign others
	usages    []x509.ExtKeyUsage // nil: client auth
	notBefore time.Time          // zero: an hour ago
	notAfter  time.Time          // zero: in a day
	parent    *testCert          // nil: self-signed
}

// newCert makes a certificate (ECDSA P-256) as spec says.
func newCert(t testing.TB, spec certSpec) *testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)),
		Subject:      spec.subject,
		NotBefore:    spec.notBefore,
		NotAfter:     spec.notAfter,
		ExtKeyUsage:  spec.usages,
		KeyUsage:     x509.KeyUsageDigitalSignature,
	}
	if tmpl.NotBefore.IsZero() {
		tmpl.NotBefore = time.Now().Add(-time.Hour)
	}
	if tmpl.NotAfter.IsZero() {
		tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	}
	if spec.ca {
		tmpl.IsCA = true
		tmpl.BasicConstraintsValid = true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	} else if tmpl.ExtKeyUsage == nil {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	parent, signer := tmpl, key
	if spec.parent != nil {
		parent, signer = spec.parent.cert, spec.parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCert{cert: c, key: key}
}

// newCA makes a self-signed CA named cn.
func newCA(t testing.TB, cn string) *testCert {
	return newCert(t, certSpec{subject: pkix.Name{CommonName: cn}, ca: true})
}

// pool is a CertPool of cs.
func pool(cs ...*testCert) *x509.CertPool {
	p := x509.NewCertPool()
	for _, c := range cs {
		p.AddCert(c.cert)
	}
	return p
}

// tlsRequest is a GET of / that came over TLS with the client chain
// chain (none: TLS without a client certificate).
func tlsRequest(chain ...*testCert) *http.Request {
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.TLS = &tls.ConnectionState{}
	for _, c := range chain {
		req.TLS.PeerCertificates = append(req.TLS.PeerCertificates, c.cert)
	}
	return req
}

func bigInt(n int64) *big.Int { return big.NewInt(n) }
