package authn

import (
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/registry/request"
)

func TestClientCert(t *testing.T) {
	ca := newCA(t, "client-ca")
	other := newCA(t, "other-ca")
	inter := newCert(t, certSpec{subject: pkix.Name{CommonName: "intermediate"}, ca: true, parent: ca})
	alice := newCert(t, certSpec{subject: pkix.Name{CommonName: "alice", Organization: []string{"dev", "ops"}}, parent: ca})
	viaInter := newCert(t, certSpec{subject: pkix.Name{CommonName: "bob"}, parent: inter})
	foreign := newCert(t, certSpec{subject: pkix.Name{CommonName: "eve"}, parent: other})
	expired := newCert(t, certSpec{subject: pkix.Name{CommonName: "old"}, parent: ca, notAfter: time.Now().Add(-time.Minute)})
	future := newCert(t, certSpec{subject: pkix.Name{CommonName: "new"}, parent: ca, notBefore: time.Now().Add(time.Hour)})
	selfSigned := newCert(t, certSpec{subject: pkix.Name{CommonName: "self"}})
	expiredInter := newCert(t, certSpec{subject: pkix.Name{CommonName: "old-intermediate"}, ca: true, parent: ca, notAfter: time.Now().Add(-time.Minute)})
	viaExpired := newCert(t, certSpec{subject: pkix.Name{CommonName: "frank"}, parent: expiredInter})
	serverOnly := newCert(t, certSpec{subject: pkix.Name{CommonName: "server"}, parent: ca, usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	noCN := newCert(t, certSpec{subject: pkix.Name{Organization: []string{"dev"}}, parent: ca})
	withUID := newCert(t, certSpec{subject: pkix.Name{CommonName: "carol", ExtraNames: []pkix.AttributeTypeAndValue{{Type: uidOID, Value: "uid-7"}}}, parent: ca})
	twoUIDs := newCert(t, certSpec{subject: pkix.Name{CommonName: "dave", ExtraNames: []pkix.AttributeTypeAndValue{{Type: uidOID, Value: "a"}, {Type: uidOID, Value: "b"}}}, parent: ca})
	emptyUID := newCert(t, certSpec{subject: pkix.Name{CommonName: "erin", ExtraNames: []pkix.AttributeTypeAndValue{{Type: uidOID, Value: ""}}}, parent: ca})

	credID := func(c *testCert) map[string][]string {
		fp := sha256.Sum256(c.cert.Raw)
		return map[string][]string{CredentialIDKey: {"X509SHA256=" + hex.EncodeToString(fp[:])}}
	}
	auth, err := ClientCert(ClientCertOptions{Roots: pool(ca)})
	if err != nil {
		t.Fatal(err)
	}
	var unknownAuthority x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	tests := []struct {
		name    string
		req     *http.Request
		want    *request.User
		errAs   any    // a pointer to the error type wanted, nil for none
		errText string // a part of the error's message
	}{
		{name: "no TLS", req: httptest.NewRequest(http.MethodGet, "/", nil)},
		{name: "TLS without a certificate", req: tlsRequest()},
		{name: "signed by the CA", req: tlsRequest(alice), want: &request.User{Name: "alice", Groups: []string{"dev", "ops"}, Extra: credID(alice)}},
		{name: "through an intermediate", req: tlsRequest(viaInter, inter), want: &request.User{Name: "bob", Extra: credID(viaInter)}},
		{name: "intermediate not sent", req: tlsRequest(viaInter), errAs: &unknownAuthority, errText: "failed: x509: certificate signed by unknown authority"},
		{name: "another CA", req: tlsRequest(foreign), errAs: &unknownAuthority, errText: "authn: verifying certificate SN="},
		{name: "another CA as intermediate", req: tlsRequest(foreign, other), errAs: &unknownAuthority},
		{name: "expired", req: tlsRequest(expired), errAs: &invalid, errText: "certificate has expired"},
		{name: "not yet valid", req: tlsRequest(future), errAs: &invalid, errText: "certificate has expired or is not yet valid"},
		{name: "self-signed", req: tlsRequest(selfSigned), errAs: &unknownAuthority},
		{name: "expired intermediate", req: tlsRequest(viaExpired, expiredInter), errAs: &invalid},
		{name: "not for client auth", req: tlsRequest(serverOnly), errAs: &invalid, errText: "incompatible key usage"},
		{name: "empty common name", req: tlsRequest(noCN)},
		{name: "UID attribute", req: tlsRequest(withUID), want: &request.User{Name: "carol", UID: "uid-7", Extra: credID(withUID)}},
		{name: "two UIDs", req: tlsRequest(twoUIDs), errText: ErrCertUIDMultiple.Error()},
		{name: "empty UID", req: tlsRequest(emptyUID), errText: ErrCertUIDEmpty.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, ok, err := auth.Authenticate(tt.req)
			if (err != nil) != (tt.errAs != nil || tt.errText != "") {
				t.Fatalf("err = %v", err)
			}
			if tt.errAs != nil {
				var ce *CertificateError
				if !errors.As(err, &ce) || ce.Cert != tt.req.TLS.PeerCertificates[0] || !errors.As(err, tt.errAs) {
					t.Fatalf("err = %#v, want a *CertificateError wrapping %T", err, tt.errAs)
				}
			}
			if err != nil && !strings.Contains(err.Error(), tt.errText) {
				t.Fatalf("err = %q, want it to contain %q", err, tt.errText)
			}
			if ok != (tt.want != nil) || !reflect.DeepEqual(u, tt.want) {
				t.Fatalf("got %+v, %v; want %+v", u, ok, tt.want)
			}
		})
	}
}

func TestClientCertNeedsRoots(t *testing.T) {
	if _, err := ClientCert(ClientCertOptions{}); !errors.Is(err, ErrNoRoots) {
		t.Fatalf("err = %v, want ErrNoRoots", err)
	}
}

// TestCertificateErrorMessage checks kube's shape of the message, the
// serial number and the key IDs as colon-separated upper-case hex.
func TestCertificateErrorMessage(t *testing.T) {
	c := &x509.Certificate{SerialNumber: bigInt(258), SubjectKeyId: []byte{0xab, 0x0c}, AuthorityKeyId: []byte{0x01}}
	err := &CertificateError{Cert: c, Err: x509.UnknownAuthorityError{}}
	want := "authn: verifying certificate SN=258, SKID=AB:0C, AKID=01 failed: x509: certificate signed by unknown authority"
	if err.Error() != want {
		t.Fatalf("got  %q\nwant %q", err.Error(), want)
	}
	c.SubjectKeyId, c.AuthorityKeyId = nil, nil
	want = "authn: verifying certificate SN=258, SKID=, AKID= failed: x509: certificate signed by unknown authority"
	if err.Error() != want {
		t.Fatalf("got  %q\nwant %q", err.Error(), want)
	}
}

// TestClientCertUIDNotString checks a UID attribute that is not a string
// (an ASN.1 integer) is an error.
func TestClientCertUIDNotString(t *testing.T) {
	c := &x509.Certificate{Subject: pkix.Name{CommonName: "x", Names: []pkix.AttributeTypeAndValue{{Type: asn1.ObjectIdentifier(uidOID), Value: 7}}}}
	if _, ok, err := certUser(c); ok || !errors.Is(err, ErrCertUIDNotString) {
		t.Fatalf("ok %v, err %v", ok, err)
	}
}
