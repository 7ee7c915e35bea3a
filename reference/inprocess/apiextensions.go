package inprocess

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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// APIExtensionsOptions say how to run apiextensions-apiserver.
// EtcdServers is required.
type APIExtensionsOptions struct {
	EtcdServers []string
	// EtcdPrefix is --etcd-prefix; when empty one of its own, so that
	// several servers can share one etcd.
	EtcdPrefix string
}

// APIExtensions is a running apiextensions-apiserver.
type APIExtensions struct {
	// Config reaches it as its loopback client (group system:masters,
	// which every authorizer allows). Copy it before changing it.
	Config *rest.Config
	stop   func()
	once   sync.Once
}

// Stop shuts the server down and removes its files. It may be called more
// than once.
func (s *APIExtensions) Stop() { s.once.Do(s.stop) }

// fakeKubeconfig is the kubeconfig apiextensions-apiserver's own
// integration tests hand it for delegated authentication, authorization
// and the core informers (test/integration/fixtures.StartDefaultServer).
// Nothing answers at its address: the loopback client, which is what
// tests use, is authenticated and authorized without it.
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

// starts serialises starts: a start sets process-wide feature gates.
var starts sync.Mutex

var prefixes struct {
	sync.Mutex
	n int
}

// StartAPIExtensions starts apiextensions-apiserver in this process with
// the flags of kube's integration tests (HTTPS on a free port, no
// compaction, priority-and-fairness and the admission plugins that need
// kube-apiserver off) and waits until it is healthy.
func StartAPIExtensions(opts APIExtensionsOptions) (*APIExtensions, error) {
	if len(opts.EtcdServers) == 0 {
		return nil, fmt.Errorf("inprocess: APIExtensionsOptions.EtcdServers is empty")
	}
	if opts.EtcdPrefix == "" {
		prefixes.Lock()
		prefixes.n++
		opts.EtcdPrefix = fmt.Sprintf("/kapi-reference-apiextensions-%d-%d", os.Getpid(), prefixes.n)
		prefixes.Unlock()
	}
	starts.Lock()
	defer starts.Unlock()
	dir, err := os.MkdirTemp("", "kapi-reference-apiextensions-")
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(fakeKubeconfig), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	log := &logger{}
	s, err := servertesting.StartTestServer(log, nil, []string{
		"--etcd-prefix", opts.EtcdPrefix,
		"--etcd-servers", opts.EtcdServers[0],
		// No compaction: it would only add noise to a shared etcd.
		"--etcd-compaction-interval", "0",
		"--authentication-skip-lookup",
		"--authentication-kubeconfig", kubeconfig,
		"--authorization-kubeconfig", kubeconfig,
		"--kubeconfig", kubeconfig,
		// Off: what needs kube-apiserver.
		"--enable-priority-and-fairness=false",
		"--disable-admission-plugins", "NamespaceLifecycle,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ValidatingAdmissionPolicy,MutatingAdmissionPolicy",
	}, nil)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("inprocess: apiextensions-apiserver: %w (server log: %q)", err, log.lines())
	}
	return &APIExtensions{Config: rest.CopyConfig(s.ClientConfig), stop: func() {
		s.TearDownFn()
		_ = os.RemoveAll(dir)
	}}, nil
}

// logger keeps the server's log lines, shown only if it fails to start.
type logger struct {
	mu  sync.Mutex
	out []string
}

func (l *logger) Logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.out = append(l.out, fmt.Sprintf(format, args...))
}

func (l *logger) Errorf(format string, args ...any) { l.Logf(format, args...) }

// Fatalf is only called by StartTestServerOrDie, which is not used.
func (l *logger) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

func (l *logger) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.out
}

// InstallCRD creates the CRD of the YAML manifest on the server at cfg
// (one already there is kept) and waits, bounded by ctx, until it is
// Established, every served version is in discovery and answers a list;
// it returns the CRD as last read.
func InstallCRD(ctx context.Context, cfg *rest.Config, manifest string) (*apiextensionsv1.CustomResourceDefinition, error) {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict([]byte(manifest), &crd); err != nil {
		return nil, fmt.Errorf("inprocess: CRD manifest: %w", err)
	}
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	if _, err := crds.Create(ctx, &crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("inprocess: create CRD %s: %w", crd.Name, err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	for {
		got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err == nil && Served(ctx, cfg, dc, got) {
			return got, nil
		}
		select {
		case <-ctx.Done():
			return got, fmt.Errorf("inprocess: CRD %s not established and served: %w (last error %v, conditions %v)", crd.Name, ctx.Err(), err, conditions(got))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Served reports whether crd is Established and every served version is
// in discovery and answers a list.
func Served(ctx context.Context, cfg *rest.Config, dc discovery.DiscoveryInterface, crd *apiextensionsv1.CustomResourceDefinition) bool {
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

// conditions lists a CRD's conditions for an error message.
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
