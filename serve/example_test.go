package serve_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/serve"
	"github.com/kapi-dev/kapi/storage/memory"
)

// Serve a registry over TLS (a self-signed certificate whose CA a client
// trusts) and HTTP/2, with kube-apiserver's limits and health checks.
func Example() {
	reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
	if err != nil {
		panic(err)
	}
	defer reg.Close()
	s, err := serve.New(reg, serve.Options{
		Checks: []serve.Check{{Name: "etcd", Check: reg.Ping}},
	})
	if err != nil {
		panic(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go s.Serve(ln)
	defer s.Shutdown(context.Background())

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CertificateAuthority()) // what a kubeconfig's certificate-authority-data holds
	client := &http.Client{Transport: &http.Transport{ForceAttemptHTTP2: true, TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Get("https://" + ln.Addr().String() + "/readyz?verbose")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.Proto)
	fmt.Print(string(body))
	// Output:
	// HTTP/2.0
	// [+]ping ok
	// [+]etcd ok
	// [+]shutdown ok
	// readyz check passed
}
