package envtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/envtest"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CRDs installed after Start with controller-runtime's InstallCRDs (as
// suites that install per test do: created through the API, waited for
// in discovery) are served once it returns; UninstallCRDs deletes them,
// and once they are gone their kinds are not served.
func TestInstallCRDsAfterStart(t *testing.T) {
	t.Parallel()
	e := &envtest.Environment{}
	cfg := start(t, e)
	opts := envtest.CRDInstallOptions{Paths: []string{crdDir}, ErrorIfPathMissing: true}
	crds, err := envtest.InstallCRDs(cfg, opts)
	if err != nil {
		t.Fatalf("InstallCRDs: %v", err)
	}
	if len(crds) != 1 || crds[0].Name != "gadgets.test.kapi.dev" {
		t.Fatalf("InstallCRDs: got %d CRDs; want gadgets.test.kapi.dev", len(crds))
	}
	// A fresh client discovers the kind and serves its objects.
	if err := newClient(t, cfg).Create(ctxFor(t), gadget("default", "g", 1)); err != nil {
		t.Fatalf("create a Gadget after InstallCRDs: %v", err)
	}

	if err := envtest.UninstallCRDs(cfg, opts); err != nil {
		t.Fatalf("UninstallCRDs: %v", err)
	}
	// UninstallCRDs deletes and does not wait (controller-runtime's
	// crd.go): the CRD goes once its instances are cleaned up (its
	// customresourcecleanup finalizer), as in kube.
	c := newClient(t, cfg)
	err = wait.PollUntilContextTimeout(ctxFor(t), 10*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Name: "gadgets.test.kapi.dev"}, &apiextensionsv1.CustomResourceDefinition{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	if err != nil {
		t.Fatalf("the CRD after UninstallCRDs: %v; want it gone", err)
	}
	if err := c.Create(ctxFor(t), gadget("default", "h", 1)); !meta.IsNoMatchError(err) && !apierrors.IsNotFound(err) {
		t.Fatalf("create a Gadget after UninstallCRDs: got %v; want the kind not served", err)
	}
}
