// Package controller is an example controller-runtime controller tested
// with kapi/envtest: for each Greeting (example.kapi.dev/v1, a CRD in
// config/crd) it keeps a ConfigMap "<name>-greeting" holding the
// greeting's message, owned by the Greeting, and records the ConfigMap's
// name and the generation it saw in the Greeting's status.
//
// Its tests are written against controller-runtime's envtest API: they
// name Environment and User through envtest_kapi_test.go, which imports
// github.com/kapi-dev/kapi/envtest, or, built with -tags crenvtest,
// envtest_cr_test.go, which imports sigs.k8s.io/controller-runtime/pkg/envtest
// instead — the two files differ by that import alone (checked by
// TestOneImportApart), so the compiler checks that switching is one
// import.
package controller
