package envtest_test

import (
	"context"
	"fmt"

	"github.com/kapi-dev/kapi/envtest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// An Environment as a controller-runtime suite starts one: the CRDs of a
// directory, a client on the returned config.
func ExampleEnvironment() {
	testEnv := &envtest.Environment{
		CRDDirectoryPaths:     []string{"testdata/crds"},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := testEnv.Start()
	if err != nil {
		panic(err)
	}
	defer func() { _ = testEnv.Stop() }()

	c, err := client.New(cfg, client.Options{})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello"}, Data: map[string]string{"greeting": "hi"}}
	if err := c.Create(ctx, cm); err != nil {
		panic(err)
	}
	var got corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKeyFromObject(cm), &got); err != nil {
		panic(err)
	}
	fmt.Println(got.Data["greeting"], len(testEnv.CRDs), testEnv.CRDs[0].Name)
	// Output: hi 1 gadgets.test.kapi.dev
}
