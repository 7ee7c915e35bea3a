// Package envtest starts a kapi API server in-process for controller
// tests: a drop-in for sigs.k8s.io/controller-runtime/pkg/envtest whose
// Environment has the same fields and methods, so a suite switches by
// changing its import path.
//
//	testEnv := &envtest.Environment{
//		CRDDirectoryPaths:     []string{filepath.Join("..", "config", "crd", "bases")},
//		ErrorIfCRDPathMissing: true,
//	}
//	cfg, err := testEnv.Start() // milliseconds: no binaries, no etcd
//	...
//	defer testEnv.Stop()
//
// Start serves a kapi registry (namespaces, configmaps, the RBAC and
// review kinds, package builtin's kinds, CRDs and admission webhook
// configurations) on the in-memory store, over HTTPS on a loopback port
// with a self-signed certificate, then installs the Environment's CRDs
// and webhook configurations through the API with controller-runtime's
// own installers (InstallCRDs, WebhookInstallOptions.Install), as envtest
// does; kapi calls the test's webhook server over TLS. Users are
// bearer tokens: Start provisions "admin" in system:masters, as envtest
// does, and AddUser any other user with its groups; requests are
// authorized by RBAC, as envtest's kube-apiserver does
// (--authorization-mode=RBAC), so a user gets what the roles and bindings
// created through the API grant it.
//
// What carries over from controller-runtime's envtest, and what does not
// yet, is listed in the module's README.md.
//
// Invariant: every Environment is independent — its own store, registry,
// listener, certificate and tokens — so tests start one each and run with
// t.Parallel(). Stop closes the listener and every connection, ends the
// registry's background work (garbage collector, RBAC feeds) and the
// store's, and removes the webhook certificate directory.
package envtest
