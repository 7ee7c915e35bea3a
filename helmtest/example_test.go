package helmtest_test

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// Helm installs a chart on kapi as on any cluster: a kubeconfig naming
// the server, and Helm's secrets driver keeping the release.
func Example() {
	reg, err := server.New(server.Options{})
	if err != nil {
		panic(err)
	}
	defer reg.Close()
	srv := httptest.NewServer(reg)
	defer srv.Close()

	dir, err := os.MkdirTemp("", "helm")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	kubeconfig, cache, ns := filepath.Join(dir, "kubeconfig"), filepath.Join(dir, "cache"), "default"
	if err := os.WriteFile(kubeconfig, server.Kubeconfig(srv.URL), 0o600); err != nil {
		panic(err)
	}
	getter := &genericclioptions.ConfigFlags{KubeConfig: &kubeconfig, CacheDir: &cache, Namespace: &ns}

	cfg := new(action.Configuration)
	if err := cfg.Init(getter, ns, "secret", func(string, ...any) {}); err != nil {
		panic(err)
	}
	chart, err := loader.Load("testdata/web")
	if err != nil {
		panic(err)
	}
	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace = "web", ns
	rel, err := install.Run(chart, map[string]any{"replicas": 2})
	if err != nil {
		panic(err)
	}
	fmt.Println(rel.Name, rel.Version, rel.Info.Status)
	// Output: web 1 deployed
}
