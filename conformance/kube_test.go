package conformance

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/reference/inprocess"
)

// The reference implementation: k8s.io/apiextensions-apiserver, the
// apiserver kube-apiserver embeds for CustomResourceDefinitions, run
// in-process on an embedded etcd of its own. It serves CRDs and custom
// resources only (no namespaces, no configmaps), so comparisons with kapi
// are made on custom resources (see kube_compare_test.go).
//
// One server is started per test process, by the first test that asks for
// it, and shared by every test after that: tests keep apart by using
// namespaces and CRDs of their own. Starting it (etcd, then the server and
// its post-start hooks, until /healthz is ok) takes about 2-4 s.

// kube is the shared reference server.
var kube struct {
	once sync.Once
	cfg  *rest.Config
	err  error
	// took is how long starting it took, logged by each test that uses it.
	took time.Duration
	// stop shuts the server down, then its etcd, and removes their
	// temporary directories.
	stop func()

	// crds maps the name of each CRD installCRD created to its manifest.
	mu   sync.Mutex
	crds map[string]string
}

// kubeServer returns a client config for the shared reference
// apiextensions-apiserver, starting it on first use. The config
// authenticates as the server's loopback client (group system:masters),
// which every authorizer allows, so requests are never refused for want of
// credentials. Callers must not modify the returned config (rest.CopyConfig
// it first).
func kubeServer(t testing.TB) *rest.Config {
	t.Helper()
	kube.once.Do(func() {
		start := time.Now()
		kube.cfg, kube.stop, kube.err = startKube()
		kube.took = time.Since(start)
	})
	if kube.err != nil {
		t.Fatalf("reference apiextensions-apiserver: %v", kube.err)
	}
	t.Logf("reference apiextensions-apiserver at %s (started in %s)", kube.cfg.Host, kube.took.Round(time.Millisecond))
	return kube.cfg
}

// stopKube shuts the reference server down if a test started it, and
// removes its temporary directories. TestMain (storage_test.go) is to call
// it after m.Run; until it does, the server ends with the process and
// leaves its directories behind.
func stopKube() {
	if kube.stop != nil {
		kube.stop()
	}
}

// startKube starts an embedded etcd and apiextensions-apiserver on it
// (the reference module's inprocess package) and returns the loopback
// client config.
func startKube() (*rest.Config, func(), error) {
	etcd, err := startEtcd()
	if err != nil {
		return nil, nil, fmt.Errorf("embedded etcd: %w", err)
	}
	s, err := inprocess.StartAPIExtensions(inprocess.APIExtensionsOptions{EtcdServers: []string{etcd.Endpoint}, EtcdPrefix: "/kube"})
	if err != nil {
		etcd.Close()
		return nil, nil, err
	}
	cfg := rest.CopyConfig(s.Config)
	cfg.QPS, cfg.Burst = -1, 0
	stop := func() {
		s.Stop()
		etcd.Close()
	}
	return cfg, stop, nil
}

// installCRD creates the CRD of the manifest crdYAML on the reference
// server at cfg and waits until it is Established and its resources are in
// discovery and can be listed. A CRD already installed from the same
// manifest (by an earlier test of the process) is reused; one of the same
// name from a different manifest fails the test.
func installCRD(t testing.TB, cfg *rest.Config, crdYAML string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict([]byte(crdYAML), &crd); err != nil {
		t.Fatalf("installCRD: decode manifest: %v", err)
	}
	kube.mu.Lock()
	defer kube.mu.Unlock()
	if prev, ok := kube.crds[crd.Name]; ok && prev != crdYAML {
		t.Fatalf("installCRD: CRD %s is already installed from a different manifest", crd.Name)
	}

	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	got, err := inprocess.InstallCRD(ctx, cfg, crdYAML)
	if err != nil {
		t.Fatalf("installCRD: %v", err)
	}
	if kube.crds == nil {
		kube.crds = map[string]string{}
	}
	kube.crds[crd.Name] = crdYAML
	return got
}
