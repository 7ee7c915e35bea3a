// Package inprocess starts the reference servers that run inside the test
// process: a single-member embedded etcd (go.etcd.io/etcd/server/v3
// v3.7.0) and k8s.io/apiextensions-apiserver v0.37.2 — the CRD server
// kube-apiserver embeds — on it, with the flags of kube's own
// integration tests. It is the one place kapi's tests and benchmarks
// start them from; the kubeapiserver package runs the whole
// kube-apiserver as a child process.
//
// Unlike the reference module's other packages it imports etcd and
// k8s.io/*: it is for modules that already depend on them (conformance,
// bench).
//
//	e, err := inprocess.StartEtcd(inprocess.EtcdOptions{})
//	defer e.Close()
//	s, err := inprocess.StartAPIExtensions(inprocess.APIExtensionsOptions{EtcdServers: []string{e.Endpoint}})
//	defer s.Stop()
//	crd, err := inprocess.InstallCRD(ctx, s.Config, manifest) // created, Established, in discovery, listable
package inprocess
