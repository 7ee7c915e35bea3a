package etcd_test

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/kapi-dev/kapi/reference/etcd"
)

// Build etcd beside kube-apiserver, for KUBEBUILDER_ASSETS.
func ExampleBuild() {
	bin, err := etcd.Build(context.Background(), "")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(filepath.Base(bin))
	// Output: etcd
}
