// Package kuberaytest runs a real kubebuilder project's envtest suite on
// kapi's envtest: KubeRay's controllers/ray (github.com/ray-project/
// kuberay/ray-operator, Apache-2.0), whose suite_test.go starts an
// envtest.Environment with CRDDirectoryPaths and ErrorIfCRDPathMissing,
// a controller-runtime manager with the RayCluster, RayJob and RayService
// reconcilers, and Ginkgo specs against them.
//
// Nothing of KubeRay is committed here: the test copies the package and
// its CRDs from the Go module cache into testdata/kuberay (ignored by
// git), changes the one import line of suite_test.go
// ("sigs.k8s.io/controller-runtime/pkg/envtest" becomes
// envtest "github.com/kapi-dev/kapi/envtest"), and runs go test on the
// copy. It is a module of its own so that KubeRay's dependencies stay
// out of every other module.
package kuberaytest
