package metrics_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/kapi-dev/kapi/metrics"
	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/serve"
	"github.com/kapi-dev/kapi/storage/memory"
)

// Measure a served registry and read /metrics, which the registry
// authorizes as a non-resource URL.
func Example() {
	m := metrics.New(metrics.Options{})
	reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{}), Metrics: m})
	if err != nil {
		panic(err)
	}
	defer reg.Close()
	s, err := serve.New(reg, serve.Options{TLS: serve.TLS{Disabled: true}, Observer: m, Metrics: m.Handler()})
	if err != nil {
		panic(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go s.Serve(ln)
	defer s.Shutdown(context.Background())
	url := "http://" + ln.Addr().String()
	resp, _ := http.Get(url + "/api/v1/namespaces/default")
	resp.Body.Close()
	resp, _ = http.Get(url + "/metrics")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "apiserver_request_total{") {
			fmt.Println(line)
		}
	}
	// Output:
	// apiserver_request_total{code="200",component="apiserver",dry_run="",group="",resource="namespaces",scope="resource",subresource="",verb="GET",version="v1"} 1
}
