package envtest_test

import (
	"context"
	"fmt"
	"net/http"

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

// A fault in force: the next update of a ConfigMap answers 409 Conflict,
// as when another writer got there first; the request log shows it.
func ExampleEnvironment_InjectFault() {
	testEnv := &envtest.Environment{InProcess: true}
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
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello"}}
	if err := c.Create(ctx, cm); err != nil {
		panic(err)
	}
	conflict, err := testEnv.InjectFault(envtest.Fault{Verb: "update", Resource: "configmaps", Code: http.StatusConflict, Count: 1})
	if err != nil {
		panic(err)
	}
	cm.Data = map[string]string{"greeting": "hi"}
	fmt.Println(c.Update(ctx, cm))
	fmt.Println(c.Update(ctx, cm), conflict.Hits())
	for _, r := range testEnv.Requests() {
		if r.IsWrite() {
			fmt.Printf("%s %s %q %s %d fault=%q\n", r.Verb, r.Resource, r.Name, r.User, r.Code, r.Fault)
		}
	}
	// Output:
	// Operation cannot be fulfilled on configmaps "hello": the object has been modified; please apply your changes to the latest version and try again
	// <nil> 1
	// create configmaps "" admin 201 fault=""
	// update configmaps "hello" admin 409 fault="409"
	// update configmaps "hello" admin 200 fault=""
}

// Users as client certificates, as controller-runtime's envtest makes
// them: the certificate's common name is the user, its organizations the
// groups, and RBAC decides.
func ExampleNewCertAuthn() {
	authn, err := envtest.NewCertAuthn()
	if err != nil {
		panic(err)
	}
	testEnv := &envtest.Environment{}
	testEnv.ControlPlane.GetAPIServer().SecureServing.Authn = authn
	if _, err := testEnv.Start(); err != nil {
		panic(err)
	}
	defer func() { _ = testEnv.Stop() }()
	vera, err := testEnv.AddUser(envtest.User{Name: "vera", Groups: []string{"viewers"}}, nil)
	if err != nil {
		panic(err)
	}
	c, err := client.New(vera.Config(), client.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(len(vera.Config().CertData) > 0, vera.Config().BearerToken == "")
	fmt.Println(c.List(context.Background(), &corev1.ConfigMapList{}, client.InNamespace("default")))
	// Output:
	// true true
	// configmaps is forbidden: User "vera" cannot list resource "configmaps" in API group "" in the namespace "default"
}
