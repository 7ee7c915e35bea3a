package server

import (
	"crypto/tls"

	"github.com/kapi-dev/kapi/serve"
)

// SelfSignedCert makes a serving certificate for hosts signed by a CA of
// its own, and the CA's PEM (serve.SelfSigned).
func SelfSignedCert(hosts ...string) (tls.Certificate, []byte, error) {
	return serve.SelfSigned(hosts...)
}
