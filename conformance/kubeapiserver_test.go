package conformance

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/reference/kubeapiserver"
)

// The full reference: the real kube-apiserver (k8s.io/kubernetes v1.37.2,
// built by the reference module's kubeapiserver package) with RBAC, on an
// embedded etcd of its own. One is started per test process, by the first
// test that asks for it, and shared (as kube_test.go shares
// apiextensions-apiserver): tests keep apart by namespaces of their own.
//
// Every test user is in refTokens, the --token-auth-file both it and the
// kapi servers compared with it read.

// refTokens is the token file of the tests that compare with
// kube-apiserver: an admin in system:masters, alice in no group (the
// three-column form), bob in group dev, carol (who impersonates) and dana,
// the user cluster-wide corpus cases bind cluster roles to (the shared
// kube-apiserver keeps them: alice's rules, which TestRBACAsKube lists,
// stay the namespaces' own).
const refTokens = `admin-token,admin,uid-admin,"system:masters"
alice-token,alice,uid-alice
bob-token,bob,uid-bob,"dev"
carol-token,carol,uid-carol
dana-token,dana,uid-dana
`

// kubeAPIServerStartTimeout bounds the first start: building the binary
// when the Go build cache is cold (minutes on 2 cores; seconds after),
// then waiting for /readyz.
const kubeAPIServerStartTimeout = 20 * time.Minute

var refAPIServer struct {
	once sync.Once
	srv  *kubeapiserver.Server
	etcd *etcdServer
	err  error
	took time.Duration
}

// kubeAPIServer returns the shared kube-apiserver, starting it on first
// use.
func kubeAPIServer(t testing.TB) *kubeapiserver.Server {
	t.Helper()
	refAPIServer.once.Do(func() {
		start := time.Now()
		refAPIServer.srv, refAPIServer.etcd, refAPIServer.err = startKubeAPIServer()
		refAPIServer.took = time.Since(start)
	})
	if refAPIServer.err != nil {
		t.Fatalf("reference kube-apiserver: %v", refAPIServer.err)
	}
	t.Logf("reference kube-apiserver at %s (built and started in %s)", refAPIServer.srv.URL, refAPIServer.took.Round(time.Millisecond))
	return refAPIServer.srv
}

func startKubeAPIServer() (*kubeapiserver.Server, *etcdServer, error) {
	etcd, err := startEtcd()
	if err != nil {
		return nil, nil, fmt.Errorf("embedded etcd: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), kubeAPIServerStartTimeout)
	defer cancel()
	srv, err := kubeapiserver.Start(ctx, kubeapiserver.Options{
		EtcdServers:   []string{etcd.Endpoint},
		TokenAuthFile: refTokens,
		FrontProxy:    true, // kube-aggregator proxies to examples/aggregated (aggregated_test.go)
		// kapi serves CBOR (CODEC-4): the reference is the kube that does
		// too. CBORServingAndStorage is alpha, off by default in v1.37
		// (k8s.io/apiserver/pkg/features); off, kube would answer 406 to
		// application/cbor and leave it out of its 406 and 415 lists.
		Args: []string{"--feature-gates=CBORServingAndStorage=true"},
	})
	if err != nil {
		etcd.Close()
		return nil, nil, err
	}
	return srv, etcd, nil
}

// stopKubeAPIServer stops the shared kube-apiserver, then its etcd, if a
// test started them; TestMain calls it after m.Run.
func stopKubeAPIServer() {
	if refAPIServer.srv != nil {
		refAPIServer.srv.Stop()
	}
	if refAPIServer.etcd != nil {
		refAPIServer.etcd.Close()
	}
}
