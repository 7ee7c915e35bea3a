package conformance

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	servertesting "k8s.io/apiextensions-apiserver/pkg/cmd/server/testing"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
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

// kubeLogger is the servertesting.Logger of the shared server: it is not
// any one test's, since the server outlives the test that started it.
type kubeLogger struct {
	mu  sync.Mutex
	out []string
}

func (l *kubeLogger) Logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.out = append(l.out, fmt.Sprintf(format, args...))
}

func (l *kubeLogger) Errorf(format string, args ...any) { l.Logf(format, args...) }

// Fatalf is only called by StartTestServerOrDie, which startKube does not
// use.
func (l *kubeLogger) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

// fakeKubeconfig is the kubeconfig apiextensions-apiserver's own
// integration tests hand it for delegated authentication, authorization and
// the core informers (see k8s.io/apiextensions-apiserver's
// test/integration/fixtures.StartDefaultServer). Nothing answers at its
// address: the loopback client, which is what the tests use, is
// authenticated and authorized without it.
const fakeKubeconfig = `apiVersion: v1
kind: Config
clusters:
- cluster:
    server: http://127.1.2.3:12345
  name: integration
contexts:
- context:
    cluster: integration
    user: test
  name: default-context
current-context: default-context
users:
- name: test
  user:
    password: test
    username: test
`

// startKube starts an embedded etcd and apiextensions-apiserver on it,
// with the flags of kube's own integration tests
// (fixtures.StartDefaultServer), and returns the loopback client config.
func startKube() (*rest.Config, func(), error) {
	etcd, err := startEtcd()
	if err != nil {
		return nil, nil, fmt.Errorf("embedded etcd: %w", err)
	}
	dir, err := os.MkdirTemp("", "kapi-conformance-kube-")
	if err != nil {
		etcd.close()
		return nil, nil, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(fakeKubeconfig), 0o600); err != nil {
		etcd.close()
		_ = os.RemoveAll(dir)
		return nil, nil, err
	}
	log := &kubeLogger{}
	s, err := servertesting.StartTestServer(log, nil, []string{
		"--etcd-prefix", "/kube",
		"--etcd-servers", "http://" + etcd.etcd.Clients[0].Addr().String(),
		// No compaction: it would only add noise to the shared etcd.
		"--etcd-compaction-interval", "0",
		"--authentication-skip-lookup",
		"--authentication-kubeconfig", kubeconfig,
		"--authorization-kubeconfig", kubeconfig,
		"--kubeconfig", kubeconfig,
		// Disable admission and filters that need kube-apiserver.
		"--enable-priority-and-fairness=false",
		"--disable-admission-plugins", "NamespaceLifecycle,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ValidatingAdmissionPolicy,MutatingAdmissionPolicy",
	}, nil)
	if err != nil {
		etcd.close()
		_ = os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("%w (server log: %q)", err, log.out)
	}
	cfg := rest.CopyConfig(s.ClientConfig)
	cfg.QPS, cfg.Burst = -1, 0
	stop := func() {
		s.TearDownFn()
		etcd.close()
		_ = os.RemoveAll(dir)
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
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("installCRD: %v", err)
	}
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(ctx, &crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("installCRD: create %s: %v", crd.Name, err)
	}
	if kube.crds == nil {
		kube.crds = map[string]string{}
	}
	kube.crds[crd.Name] = crdYAML

	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatalf("installCRD: %v", err)
	}
	var got *apiextensionsv1.CustomResourceDefinition
	for {
		got, err = crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err == nil && crdServed(ctx, cfg, dc, got) {
			return got
		}
		select {
		case <-ctx.Done():
			t.Fatalf("installCRD: %s not established and served after %s: last error %v, conditions %+v", crd.Name, waitTimeout, err, conditions(got))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// crdServed reports whether crd is Established and every served version
// is in discovery and answers a list.
func crdServed(ctx context.Context, cfg *rest.Config, dc discovery.DiscoveryInterface, crd *apiextensionsv1.CustomResourceDefinition) bool {
	established := false
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			established = true
		}
	}
	if !established {
		return false
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return false
	}
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		gv := crd.Spec.Group + "/" + v.Name
		l, err := dc.ServerResourcesForGroupVersion(gv)
		if err != nil {
			return false
		}
		found := false
		for _, r := range l.APIResources {
			found = found || r.Name == crd.Spec.Names.Plural
		}
		if !found {
			return false
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/apis/"+gv+"/"+crd.Spec.Names.Plural, nil)
		if err != nil {
			return false
		}
		resp, err := hc.Do(req)
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false
		}
	}
	return true
}

// conditions lists a CRD's conditions for a failure message.
func conditions(crd *apiextensionsv1.CustomResourceDefinition) []string {
	if crd == nil {
		return nil
	}
	var out []string
	for _, c := range crd.Status.Conditions {
		out = append(out, fmt.Sprintf("%s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message))
	}
	return out
}
