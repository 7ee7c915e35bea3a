// Command kubectl is kubectl built from k8s.io/kubectl at the version the
// conformance module pins, for trying the example server by hand:
//
//	cd conformance && go run ./cmd/kubectl --kubeconfig /tmp/kapi.kubeconfig get wd
package main
