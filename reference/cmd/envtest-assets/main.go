// Command envtest-assets builds kube-apiserver and etcd (the reference
// module's tools) into one directory and prints it, for
// controller-runtime's envtest:
//
//	KUBEBUILDER_ASSETS=$(cd reference && go run ./cmd/envtest-assets) go test ./...
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kapi-dev/kapi/reference/etcd"
	"github.com/kapi-dev/kapi/reference/kubeapiserver"
)

func main() {
	ctx := context.Background()
	api, err := kubeapiserver.Build(ctx, "")
	if err == nil {
		_, err = etcd.Build(ctx, filepath.Dir(api))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest-assets:", err)
		os.Exit(1)
	}
	fmt.Println(filepath.Dir(api))
}
