// Command apiserver is the example server of examples/apiserver with
// /metrics: kube-apiserver's metrics, in Prometheus' format, authorized
// as a non-resource URL.
//
//	go run ./cmd/apiserver --cert-dir /tmp/kapi-certs --kubeconfig /tmp/kapi.kubeconfig -v 1
//	kubectl --kubeconfig /tmp/kapi.kubeconfig get --raw /metrics
package main
