package envtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// CertAuthn provisions users as client certificates signed by a CA of its
// own (the user's name as common name, its groups as organizations), which
// the API server verifies as kube-apiserver's --client-ca-file does:
// envtest's CertAuthn. Set it as SecureServing.Authn before Start. It is
// safe for concurrent use.
type CertAuthn struct {
	mu     sync.Mutex
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	caPEM  []byte
	serial int64
}

var _ Authn = (*CertAuthn)(nil)

// certValidity is how long the CA and the users' certificates are valid.
const certValidity = 7 * 24 * time.Hour

// NewCertAuthn returns a CertAuthn with a new CA.
func NewCertAuthn() (*CertAuthn, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("unable to provision client certificate auth CA: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kapi-envtest-client-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("unable to provision client certificate auth CA: %w", err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CertAuthn{ca: ca, caKey: key, caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), serial: 1}, nil
}

// Configure does nothing: the CA lives in memory.
func (c *CertAuthn) Configure(string, *Arguments) error { return nil }

// Start does nothing.
func (c *CertAuthn) Start() error { return nil }

// Stop does nothing: the certificates stay valid for a restarted server.
func (c *CertAuthn) Stop() error { return nil }

// CA is the PEM certificate of the CA that signs the users' certificates.
func (c *CertAuthn) CA() []byte { return c.caPEM }

// roots is the pool the API server verifies client certificates with.
func (c *CertAuthn) roots() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c.ca)
	return p
}

// AddUser provisions user: a copy of baseCfg with a new client
// certificate and key (CertData, KeyData).
func (c *CertAuthn) AddUser(user User, baseCfg *rest.Config) (*rest.Config, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("unable to create client certificates for %s: %w", user.Name, err)
	}
	c.mu.Lock()
	c.serial++
	serial := c.serial
	c.mu.Unlock()
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: user.Name, Organization: append([]string(nil), user.Groups...)},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.ca, &key.PublicKey, c.caKey)
	if err != nil {
		return nil, fmt.Errorf("unable to create client certificates for %s: %w", user.Name, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(baseCfg)
	cfg.CertData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	cfg.KeyData = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	return cfg, nil
}

// clientCertTransport presents cert as the TLS client certificate of every
// in-process request (which has no TLS of its own), so the API server
// authenticates it as over a connection.
type clientCertTransport struct {
	next http.RoundTripper
	cert *x509.Certificate
}

func (t *clientCertTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.TLS = &tls.ConnectionState{HandshakeComplete: true, PeerCertificates: []*x509.Certificate{t.cert}}
	return t.next.RoundTrip(req)
}

// inProcessCert moves cfg's client certificate into its in-process
// transport: client-go refuses TLS settings beside a custom transport.
func inProcessCert(cfg *rest.Config, next http.RoundTripper) error {
	if len(cfg.CertData) == 0 {
		cfg.Transport = next
		return nil
	}
	pair, err := tls.X509KeyPair(cfg.CertData, cfg.KeyData)
	if err != nil {
		return err
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return err
	}
	cfg.Transport = &clientCertTransport{next: next, cert: leaf}
	cfg.CertData, cfg.KeyData = nil, nil
	return nil
}
