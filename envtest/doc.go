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
// Users may also be client certificates (NewCertAuthn, envtest's
// CertAuthn), and AuthenticatedUser.Kubectl runs kubectl as one.
//
// Beyond envtest, for tests envtest cannot write: InjectFault makes
// chosen requests fail (Fault: kube's Status for 409, 429, 500, 503, 504,
// with Retry-After; writes answered 504 after they happen; delays;
// expired and dropped watches; stale reads), Requests is the log of every request
// served (LogRequestsOnFailure prints it when a test fails), and
// InProcess serves clients without a socket — which lets a whole
// Environment, with its controllers, run in a testing/synctest bubble
// under virtual time. Faults and the log live in a handler in front of
// the registry; the registry itself knows nothing of them.
//
// What carries over from controller-runtime's envtest, and what does not
// yet, is listed in the module's README.md.
//
// NoGarbageCollector (KAPI_ENVTEST_NO_GARBAGE_COLLECTOR=true) turns off
// kapi's garbage collector for suites written for envtest, which has none.
//
// Invariant: every Environment is independent — its own store, registry,
// listener (or in-process transport), certificate, users, faults and
// request log — so tests start one each and run with t.Parallel(). What
// they share is read-only: what the first Start compiled from the
// built-in kinds' schemas (the same *schema.Schema in every registry of
// the process), found by the others (TestEnvironmentsShareNoState). Stop
// closes the listener and every connection (in-process: ends every
// request in flight and waits for its handler), ends the registry's
// background work (garbage collector, RBAC feeds) and the store's, and
// removes the webhook certificate directory and the kubeconfigs of
// Kubectl.
package envtest
