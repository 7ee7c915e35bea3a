package kubeapiserver_test

import (
	"context"
	"fmt"
	"log"

	"github.com/kapi-dev/kapi/reference/kubeapiserver"
)

// ExampleStart starts kube-apiserver (built on first use) on an etcd the
// caller runs, with a user of its own beside the admin, and stops it.
// It has no Output: it needs an etcd, which the conformance module starts.
func ExampleStart() {
	ctx := context.Background()
	srv, err := kubeapiserver.Start(ctx, kubeapiserver.Options{
		EtcdServers:   []string{"http://127.0.0.1:2379"},
		TokenAuthFile: "alice-token,alice,uid-alice,\"dev\"\n",
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Stop()
	fmt.Println(srv.URL, len(srv.CA) > 0, srv.AdminToken != "")
}
