// Package etcd builds the real etcd server (go.etcd.io/etcd/server/v3
// v3.7.0's main package, a tool of the reference module) as a binary,
// beside kube-apiserver in kubeapiserver.DefaultBinDir: the two binaries
// controller-runtime's envtest starts (KUBEBUILDER_ASSETS), built from Go
// modules rather than downloaded. It imports only the standard library
// and the kubeapiserver package.
//
//	bin, err := etcd.Build(ctx, "") // ~/.cache/kapi-reference/<os>_<arch>/etcd
package etcd
