// Command apiserver is the example server of examples/apiserver with
// /metrics: kube-apiserver's metrics, in Prometheus' format, authorized
// as a non-resource URL.
//
//	go run ./cmd/apiserver --cert-dir /tmp/kapi-certs --kubeconfig /tmp/kapi.kubeconfig -v 1
//	kubectl --kubeconfig /tmp/kapi.kubeconfig get --raw /metrics
package main

import (
	"context"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/metrics"
)

func main() {
	server.Main(func(count func(context.Context) (map[string]int64, error)) server.Metrics {
		return metrics.New(metrics.Options{Objects: count})
	})
}
