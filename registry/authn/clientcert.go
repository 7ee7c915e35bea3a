package authn

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/kapi-dev/kapi/registry/request"
)

// ClientCertOptions configure ClientCert.
type ClientCertOptions struct {
	// Roots are the certificate authorities a client certificate must
	// chain to (kube-apiserver's --client-ca-file). Required: without
	// them x509 would trust the system's roots.
	Roots *x509.CertPool
}

// ErrNoRoots is the error of ClientCert and RequestHeader without a CA.
var ErrNoRoots = errors.New("authn: no certificate authority to verify client certificates against")

// ClientCert authenticates a request by its TLS client certificate, as
// kube's x509 authenticator with its CommonNameUserConversion. The
// certificate (req.TLS.PeerCertificates[0]) must verify against
// opts.Roots for client authentication (x509.ExtKeyUsageClientAuth),
// with the rest of the chain the client sent as intermediates. The user
// is:
//
//	Name    the subject's common name (CN)
//	Groups  the subject's organizations (O)
//	UID     the subject's UID attribute (OID 0.9.2342.19200300.100.1.1), if any
//	Extra   CredentialIDKey: "X509SHA256=<hex SHA-256 of the certificate>"
//
// A request without TLS or without a certificate is not ok; a
// certificate that does not verify is a *CertificateError (401). A
// verified certificate with an empty common name is not ok, with no
// error, as in kube (another authenticator, or anonymous, may take the
// request); one with several UIDs, or an empty one, is an error.
func ClientCert(opts ClientCertOptions) (Authenticator, error) {
	if opts.Roots == nil {
		return nil, ErrNoRoots
	}
	roots := opts.Roots
	return Func(func(req *http.Request) (*request.User, bool, error) {
		leaf, err := verifyPeer(req, roots)
		if leaf == nil || err != nil {
			return nil, false, err
		}
		return certUser(leaf)
	}), nil
}

// verifyPeer verifies the client certificate of req against roots for
// client authentication, the rest of the chain the client sent as
// intermediates, and returns it; it returns nil, nil when req carries
// none.
func verifyPeer(req *http.Request, roots *x509.CertPool) (*x509.Certificate, error) {
	if req.TLS == nil || len(req.TLS.PeerCertificates) == 0 {
		return nil, nil
	}
	certs := req.TLS.PeerCertificates
	opts := x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if len(certs) > 1 {
		opts.Intermediates = x509.NewCertPool()
		for _, c := range certs[1:] {
			opts.Intermediates.AddCert(c)
		}
	}
	if _, err := certs[0].Verify(opts); err != nil {
		return nil, &CertificateError{Cert: certs[0], Err: err}
	}
	return certs[0], nil
}

// CertificateError is the error of a client certificate that does not
// verify; Err is x509's (x509.UnknownAuthorityError,
// x509.CertificateInvalidError, ...). The message is kube's:
//
//	authn: verifying certificate SN=2, SKID=AB:CD, AKID=EF:01 failed: x509: certificate signed by unknown authority
type CertificateError struct {
	Cert *x509.Certificate
	Err  error
}

func (e *CertificateError) Error() string {
	return fmt.Sprintf("authn: verifying certificate SN=%d, SKID=%s, AKID=%s failed: %v",
		e.Cert.SerialNumber, colonHex(e.Cert.SubjectKeyId), colonHex(e.Cert.AuthorityKeyId), e.Err)
}

func (e *CertificateError) Unwrap() error { return e.Err }

// colonHex is b in upper-case hex, its bytes separated by colons.
func colonHex(b []byte) string {
	var sb strings.Builder
	const digits = "0123456789ABCDEF"
	for i, c := range b {
		if i > 0 {
			sb.WriteByte(':')
		}
		sb.WriteByte(digits[c>>4])
		sb.WriteByte(digits[c&0xf])
	}
	return sb.String()
}

// uidOID is the subject attribute kube reads a user's UID from.
var uidOID = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}

// Errors of a verified certificate's UID attribute.
var (
	ErrCertUIDNotString = errors.New("authn: unable to parse UID into a string")
	ErrCertUIDMultiple  = errors.New("authn: expected 1 UID, but found multiple")
	ErrCertUIDEmpty     = errors.New("authn: UID cannot be an empty string")
)

// certUser is the user a verified client certificate stands for (see
// ClientCert).
func certUser(c *x509.Certificate) (*request.User, bool, error) {
	if c.Subject.CommonName == "" {
		return nil, false, nil
	}
	var uid string
	n := 0
	for _, name := range c.Subject.Names {
		if !name.Type.Equal(uidOID) {
			continue
		}
		s, ok := name.Value.(string)
		if !ok {
			return nil, false, ErrCertUIDNotString
		}
		uid = s
		n++
	}
	switch {
	case n > 1:
		return nil, false, ErrCertUIDMultiple
	case n == 1 && uid == "":
		return nil, false, ErrCertUIDEmpty
	}
	fp := sha256.Sum256(c.Raw)
	return &request.User{
		Name:   c.Subject.CommonName,
		UID:    uid,
		Groups: append([]string(nil), c.Subject.Organization...),
		Extra:  map[string][]string{CredentialIDKey: {"X509SHA256=" + hex.EncodeToString(fp[:])}},
	}, true, nil
}
