package kubeapiserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// files are the credentials Start writes into the server's directory.
type files struct {
	caPEM                   []byte
	servingCert, servingKey string
	saKey, saPub            string
}

// writeCredentials writes a CA, a serving certificate it signs for
// 127.0.0.1 and localhost, and an RSA service-account key pair into dir.
func writeCredentials(dir string) (files, error) {
	var f files
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return f, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kapi-reference-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, IsCA: true, BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return f, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return f, err
	}
	f.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return f, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return f, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return f, err
	}
	f.servingCert = filepath.Join(dir, "apiserver.crt")
	f.servingKey = filepath.Join(dir, "apiserver.key")
	if err := writePEM(f.servingCert, "CERTIFICATE", der); err != nil {
		return f, err
	}
	if err := writePEM(f.servingKey, "EC PRIVATE KEY", keyDER); err != nil {
		return f, err
	}

	sa, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return f, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return f, err
	}
	f.saKey = filepath.Join(dir, "sa.key")
	f.saPub = filepath.Join(dir, "sa.pub")
	if err := writePEM(f.saKey, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(sa)); err != nil {
		return f, err
	}
	return f, writePEM(f.saPub, "PUBLIC KEY", pub)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
