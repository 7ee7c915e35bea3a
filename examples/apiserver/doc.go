// Command apiserver serves the example API (namespaces, configmaps and
// widgets.example.com) on an in-memory store. Point kubectl at it:
//
//	go run ./examples/apiserver --kubeconfig /tmp/kapi.kubeconfig
//	kubectl --kubeconfig /tmp/kapi.kubeconfig get widgets -A
//
// It serves as kube-apiserver does (the serve package), with its flag
// names: https with --tls-cert-file and --tls-private-key-file (re-read
// when they change), or a self-signed certificate kept in --cert-dir (or
// made at start when credentials are configured) and trusted by the
// --kubeconfig written; HTTP/2; --max-requests-inflight and
// --max-mutating-requests-inflight (429 beyond); --request-timeout;
// --shutdown-delay-duration on SIGTERM; /livez, /readyz and /healthz
// with ?verbose; -v 1 logs each request (verb, resource, user, code,
// latency, error). Without credentials or a certificate it speaks plain
// http on loopback.
//
// The same server with /metrics (kube-apiserver's metric names, in
// Prometheus' format) is the metrics module's cmd/apiserver:
//
//	cd metrics && go run ./cmd/apiserver --cert-dir /tmp/kapi-certs --kubeconfig /tmp/kapi.kubeconfig -v 1
package main
