package compare

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	servertesting "k8s.io/apiextensions-apiserver/pkg/cmd/server/testing"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// KubeHTTP is k8s.io/apiextensions-apiserver (the CRD server
// kube-apiserver embeds) started in-process on the shared embedded etcd,
// serving the same widgets CRD as KapiHTTP, as the conformance module's
// reference server is (conformance/kube_test.go).
func KubeHTTP() PeerInfo {
	return PeerInfo{
		Name:      "kube HTTP",
		What:      "k8s.io/apiextensions-apiserver in-process (its test server: HTTPS, HTTP/2, loopback token, priority-and-fairness and webhook admission off) on the embedded etcd, watch cache on; same CRD, same client as kapi HTTP",
		NeedsEtcd: true,
		Start: func(ctx context.Context, e *Etcd) (Peer, error) {
			cfg, stop, err := startKube(e)
			if err != nil {
				return nil, err
			}
			if err := installCRD(ctx, cfg, widgetsCRD); err != nil {
				stop()
				return nil, err
			}
			count := &wireCount{}
			count.instrument(cfg)
			p, err := newHTTPPeer(cfg, count, stop)
			if err != nil {
				stop()
				return nil, err
			}
			return p, nil
		},
	}
}

// kubeLog collects the test server's log lines (shown only if it fails to
// start).
type kubeLog struct {
	mu  sync.Mutex
	out []string
}

func (l *kubeLog) Logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.out = append(l.out, fmt.Sprintf(format, args...))
}

func (l *kubeLog) Errorf(format string, args ...any) { l.Logf(format, args...) }

// Fatalf is only called by StartTestServerOrDie, which is not used.
func (l *kubeLog) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

// fakeKubeconfig is the kubeconfig apiextensions-apiserver's own
// integration tests hand it for delegated authentication, authorization
// and the core informers (fixtures.StartDefaultServer). Nothing answers at
// its address: the loopback client is authenticated and authorized
// without it.
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

var kubeServers sync.Mutex

// startKube starts apiextensions-apiserver on e under a prefix of its own,
// with the flags of kube's integration tests, and returns the loopback
// client config (a copy the caller may change) and the tear-down.
func startKube(e *Etcd) (*rest.Config, func(), error) {
	kubeServers.Lock() // its start touches global feature gates
	defer kubeServers.Unlock()
	dir, err := os.MkdirTemp("", "kapi-bench-kube-")
	if err != nil {
		return nil, nil, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(fakeKubeconfig), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return nil, nil, err
	}
	log := &kubeLog{}
	s, err := servertesting.StartTestServer(log, nil, []string{
		"--etcd-prefix", fmt.Sprintf("/kube-http-%d", kubePrefixes.Add(1)),
		"--etcd-servers", e.Endpoint,
		"--etcd-compaction-interval", "0",
		"--authentication-skip-lookup",
		"--authentication-kubeconfig", kubeconfig,
		"--authorization-kubeconfig", kubeconfig,
		"--kubeconfig", kubeconfig,
		"--enable-priority-and-fairness=false",
		"--disable-admission-plugins", "NamespaceLifecycle,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ValidatingAdmissionPolicy,MutatingAdmissionPolicy",
	}, nil)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("apiextensions-apiserver: %w (server log: %q)", err, log.out)
	}
	stop := func() {
		s.TearDownFn()
		_ = os.RemoveAll(dir)
	}
	return rest.CopyConfig(s.ClientConfig), stop, nil
}

// installCRD creates the CRD of crdYAML and waits until it is Established,
// in discovery, and its resources answer a list.
func installCRD(ctx context.Context, cfg *rest.Config, crdYAML string) error {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict([]byte(crdYAML), &crd); err != nil {
		return fmt.Errorf("CRD manifest: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(ctx, &crd, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create CRD %s: %w", crd.Name, err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	for {
		got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err == nil && crdServed(ctx, cfg, dc, got) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CRD %s not served after a minute (last error %v)", crd.Name, err)
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
