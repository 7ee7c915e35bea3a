// Package kubeapiserver builds the real kube-apiserver (k8s.io/kubernetes
// v1.37.2, the tool of the reference module) and runs it for tests, as
// envtest does: a child process on a free loopback port, with serving
// certificates, service-account keys and a static token file it generates,
// on an etcd the caller names, until Stop.
//
// It is the one place kapi's tests and benchmarks start kube-apiserver
// from, and it imports only the standard library: a module that uses it
// (through a replace of github.com/kapi-dev/kapi/reference) gains no
// k8s.io/kubernetes requirement. The binary is built with `go build` in
// the reference module's directory, so the Go build cache makes every
// build after the first take seconds:
//
//	srv, err := kubeapiserver.Start(ctx, kubeapiserver.Options{
//		EtcdServers: []string{"http://127.0.0.1:2379"},
//		TokenAuthFile: "alice-token,alice,uid-alice,\"dev\"\n",
//	})
//	if err != nil { ... }
//	defer srv.Stop()
//	// srv.URL, srv.CA (PEM) and srv.AdminToken (system:masters) reach it.
package kubeapiserver
