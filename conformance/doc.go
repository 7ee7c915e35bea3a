// Package conformance tests kapi from the outside. It starts the example
// server (github.com/kapi-dev/kapi/examples/apiserver/server) in-process,
// one fresh server per test, and drives it with unmodified Kubernetes
// clients in their default configuration: client-go discovery and
// RESTMapper, the dynamic, typed (protobuf), metadata and scale clients, the
// dynamic client with the CBOR feature gates on, shared informers with the
// WatchList client feature off and on, controller-runtime's client and
// manager, and kubectl built from k8s.io/kubectl/pkg/cmd. The expected
// answers are kube-apiserver's; test
// comments name the REQUIREMENTS.md rows they cover.
//
// It is its own Go module so that kapi's users never get k8s.io/* in their
// module graph. The package holds only tests; run them with:
//
//	cd conformance && go test -race ./...
package conformance
