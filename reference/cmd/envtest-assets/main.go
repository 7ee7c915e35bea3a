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
