package serve

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// TLS says where the serving certificate comes from, with
// kube-apiserver's flags' meanings.
type TLS struct {
	// CertFile and KeyFile are --tls-cert-file and --tls-private-key-file:
	// the serving certificate (PEM, the chain after the leaf) and its key.
	// The files are read again when they change, so a renewed
	// certificate is served without a restart.
	CertFile, KeyFile string
	// CertDir is --cert-dir: without CertFile, the self-signed
	// certificate is kept there as apiserver.crt and apiserver.key, with
	// the CA that signed it as ca.crt (what a kubeconfig trusts), and
	// reused on the next start. Empty keeps it in memory only.
	CertDir string
	// Hosts are the names and IP addresses the self-signed certificate is
	// valid for (default 127.0.0.1, ::1 and localhost).
	Hosts []string
	// ReloadInterval is how often, at most, a handshake checks whether
	// CertFile and KeyFile changed (default 10 seconds).
	ReloadInterval time.Duration
	// Disabled serves plain HTTP/1.1: for a loopback listener or behind a
	// proxy that terminates TLS. Clients send no bearer token then.
	Disabled bool
}

// SelfSigned makes a CA and a serving certificate it signs for hosts
// (names or IP addresses), both valid for a year: the certificate (with
// the CA after it in its chain) and the CA's PEM, which a kubeconfig's
// certificate-authority-data trusts.
func SelfSigned(hosts ...string) (tls.Certificate, []byte, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: fmt.Sprintf("kapi-ca@%d", now.Unix())},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(365 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: fmt.Sprintf("kapi@%d", now.Unix())},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(365 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	return tls.Certificate{Certificate: [][]byte{der, caDER}, PrivateKey: key}, pemBlock("CERTIFICATE", caDER), nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err) // crypto/rand never fails (Go 1.24+)
	}
	return n
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// certSource serves the current certificate to each handshake, from
// files it re-reads when they change or from memory.
type certSource struct {
	certFile, keyFile string
	interval          time.Duration
	log               *slog.Logger

	cur     atomic.Pointer[tls.Certificate]
	mu      sync.Mutex // held by the one handshake that checks the files
	checked time.Time  // under mu
	stamp   string     // the files' sizes and times when cur was read; under mu
}

// newCertSource loads the certificate t names, making a self-signed one
// when it names no files; it returns the CA's PEM when it made one (or
// found one it made in CertDir).
func newCertSource(t TLS, log *slog.Logger) (*certSource, []byte, error) {
	c := &certSource{certFile: t.CertFile, keyFile: t.KeyFile, interval: t.ReloadInterval, log: log}
	if c.interval <= 0 {
		c.interval = 10 * time.Second
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return nil, nil, errors.New("serve: the certificate file and the key file go together: set both or neither")
	}
	hosts := t.Hosts
	if len(hosts) == 0 {
		hosts = []string{"127.0.0.1", "::1", "localhost"}
	}
	var caPEM []byte
	if t.CertFile == "" {
		if t.CertDir == "" {
			cert, ca, err := SelfSigned(hosts...)
			if err != nil {
				return nil, nil, err
			}
			c.cur.Store(&cert)
			return c, ca, nil
		}
		var err error
		if caPEM, err = selfSignedIn(t.CertDir, hosts); err != nil {
			return nil, nil, err
		}
		c.certFile, c.keyFile = filepath.Join(t.CertDir, "apiserver.crt"), filepath.Join(t.CertDir, "apiserver.key")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.load(); err != nil {
		return nil, nil, err
	}
	return c, caPEM, nil
}

// selfSignedIn makes the self-signed certificate in dir unless it is
// there, and returns its CA.
func selfSignedIn(dir string, hosts []string) ([]byte, error) {
	caFile := filepath.Join(dir, "ca.crt")
	if ca, err := os.ReadFile(caFile); err == nil {
		if _, err := os.Stat(filepath.Join(dir, "apiserver.key")); err == nil {
			return ca, nil
		}
	}
	cert, ca, err := SelfSigned(hosts...)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var chain bytes.Buffer
	for _, der := range cert.Certificate {
		chain.Write(pemBlock("CERTIFICATE", der))
	}
	for _, f := range []struct {
		name string
		data []byte
		mode fs.FileMode
	}{{"apiserver.key", pemBlock("PRIVATE KEY", keyDER), 0o600}, {"apiserver.crt", chain.Bytes(), 0o644}, {"ca.crt", ca, 0o644}} {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, f.mode); err != nil {
			return nil, err
		}
	}
	return ca, nil
}

// load reads the files; c.mu is held.
func (c *certSource) load() error {
	stamp, err := c.fileStamp()
	if err != nil {
		return err
	}
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	c.cur.Store(&cert)
	c.stamp, c.checked = stamp, time.Now()
	return nil
}

func (c *certSource) fileStamp() (string, error) {
	stamp := ""
	for _, f := range []string{c.certFile, c.keyFile} {
		fi, err := os.Stat(f)
		if err != nil {
			return "", fmt.Errorf("serve: %w", err)
		}
		stamp += fmt.Sprintf("%d/%d/", fi.Size(), fi.ModTime().UnixNano())
	}
	return stamp, nil
}

// get is tls.Config.GetCertificate: the current certificate, re-read
// first when its files changed (checked once per interval, by one
// handshake; the others keep the current one meanwhile). A file that
// does not load keeps the certificate served before, and is logged.
func (c *certSource) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c.certFile != "" && c.mu.TryLock() {
		if time.Since(c.checked) >= c.interval {
			c.checked = time.Now()
			if stamp, err := c.fileStamp(); err != nil || stamp != c.stamp {
				if err == nil {
					err = c.load()
				}
				if err != nil {
					c.log.Error("reloading the serving certificate; serving the one loaded before", "cert", c.certFile, "err", err)
				} else {
					c.log.Info("reloaded the serving certificate", "cert", c.certFile)
				}
			}
		}
		c.mu.Unlock()
	}
	return c.cur.Load(), nil
}
