// Command envtest-assets builds kube-apiserver and etcd (the reference
// module's tools) into one directory and prints it, for
// controller-runtime's envtest:
//
//	KUBEBUILDER_ASSETS=$(cd reference && go run ./cmd/envtest-assets) go test ./...
package main
