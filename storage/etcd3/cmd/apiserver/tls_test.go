package main

import (
	"bytes"

	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
)

// pki is a CA and the files of a certificate it signed, in a directory.
type pki struct {
	dir  string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// newCA makes a self-signed CA and writes it to dir/name.pem.
func newCA(t *testing.T, dir, name string) *pki {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, filepath.Join(dir, name+".pem"), "CERTIFICATE", der)
	return &pki{dir: dir, cert: cert, key: key}
}

// issue signs a certificate for usage (and ips, for a server) and writes
// it to dir/name.pem and its key to dir/name-key.pem; it returns both
// paths.
func (ca *pki) issue(t *testing.T, name string, usage x509.ExtKeyUsage, ips ...net.IP) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		IPAddresses:  ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(ca.dir, name+".pem"), filepath.Join(ca.dir, name+"-key.pem")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "EC PRIVATE KEY", kder)
	return certFile, keyFile
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// startTLSEtcd starts an etcd serving its clients on https at a free
// port of 127.0.0.1 with the certificate given, and asking each client
// for a certificate signed by caFile. It returns the client URL.
func startTLSEtcd(t *testing.T, caFile, certFile, keyFile string) string {
	t.Helper()
	cu := url.URL{Scheme: "https", Host: "127.0.0.1:0"}
	pu := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg := embed.NewConfig()
	cfg.Dir = t.TempDir()
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{cu}, []url.URL{cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{pu}, []url.URL{pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.ClientTLSInfo = transport.TLSInfo{CertFile: certFile, KeyFile: keyFile, TrustedCAFile: caFile, ClientCertAuth: true}
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{os.DevNull}
	cfg.UnsafeNoFsync = true
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("start etcd: %v", err)
	}
	t.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		t.Fatal("etcd not ready within 30s")
	}
	return "https://" + e.Clients[0].Addr().String()
}

// TestRunTLS runs the command against an etcd that serves https and
// requires client certificates, with the --etcd-* TLS flags: with the
// right files it serves the API on that etcd; without a client
// certificate, or with a CA that does not verify etcd's certificate, it
// fails at start, within --etcd-timeout, saying why.
func TestRunTLS(t *testing.T) {
	dir := t.TempDir()
	ca := newCA(t, dir, "ca")
	caFile := filepath.Join(dir, "ca.pem")
	serverCert, serverKey := ca.issue(t, "etcd", x509.ExtKeyUsageServerAuth, net.IPv4(127, 0, 0, 1))
	clientCert, clientKey := ca.issue(t, "kapi", x509.ExtKeyUsageClientAuth)
	other := newCA(t, t.TempDir(), "other-ca")
	otherCAFile := filepath.Join(other.dir, "other-ca.pem")
	otherCert, otherKey := other.issue(t, "kapi-other", x509.ExtKeyUsageClientAuth)
	etcdURL := startTLSEtcd(t, caFile, serverCert, serverKey)

	t.Run("client certificate", func(t *testing.T) {
		base, stop := start(t, "--etcd-servers", etcdURL, "--etcd-cafile", caFile,
			"--etcd-certfile", clientCert, "--etcd-keyfile", clientKey, "--addr", "127.0.0.1:0")
		defer stop()
		createAndGet(t, base)
	})

	const timeout = time.Second
	tests := []struct {
		name    string
		args    []string
		wantErr []string // substrings of the error, any of them
	}{
		{"no client certificate", []string{"--etcd-cafile", caFile},
			[]string{"certificate required", "bad certificate"}},
		{"client certificate of another CA", []string{"--etcd-cafile", caFile, "--etcd-certfile", otherCert, "--etcd-keyfile", otherKey},
			[]string{"unknown certificate authority", "bad certificate"}},
		{"CA that does not verify etcd", []string{"--etcd-cafile", otherCAFile, "--etcd-certfile", clientCert, "--etcd-keyfile", clientKey},
			[]string{"certificate signed by unknown authority"}},
		// https without a CA: the system's roots, which do not verify etcd.
		{"no TLS flags", nil,
			[]string{"certificate signed by unknown authority"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--etcd-servers", etcdURL, "--etcd-timeout", timeout.String(), "--addr", "127.0.0.1:0"}, tc.args...)
			var out bytes.Buffer
			t0 := time.Now()
			err := run(t.Context(), args, &out)
			took := time.Since(t0)
			if err == nil {
				t.Fatalf("run: got no error; want one (output %q)", out.String())
			}
			if took > timeout+time.Second {
				t.Errorf("run failed after %v; want within --etcd-timeout %v", took, timeout)
			}
			found := false
			for _, s := range tc.wantErr {
				found = found || strings.Contains(err.Error(), s)
			}
			if !found || !strings.Contains(err.Error(), etcdURL) {
				t.Errorf("got %q; want an error naming %s and containing one of %q", err, etcdURL, tc.wantErr)
			}
			t.Logf("after %v: %v", took.Round(time.Millisecond), err)
		})
	}
}

// createAndGet creates a configmap through the server at base and reads
// it back.
func createAndGet(t *testing.T, base string) {
	t.Helper()
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"hello"},"data":{"a":"b"}}`
	resp, err := http.Post(base+"/api/v1/namespaces/default/configmaps", "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: got %d; want 201", resp.StatusCode)
	}
	resp, err = http.Get(base + "/api/v1/namespaces/default/configmaps/hello")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Metadata struct{ ResourceVersion string } `json:"metadata"`
		Data     map[string]string                `json:"data"`
	}
	err = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || got.Data["a"] != "b" || got.Metadata.ResourceVersion == "" {
		t.Fatalf("get: got %d %+v (%v); want 200 with data a=b and a resourceVersion", resp.StatusCode, got, err)
	}
}
