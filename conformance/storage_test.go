package conformance

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/reference/inprocess"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/cache"
	"github.com/kapi-dev/kapi/storage/durable"
	"github.com/kapi-dev/kapi/storage/etcd3"
)

// storageEnv selects the storage backend the tests run the example server
// on: "memory" (the default, also when unset), "etcd3" (one embedded etcd
// per test process, each test's store under its own key prefix),
// "cache+etcd3" (the same, behind kapi's watch cache, storage/cache) or
// "durable" (storage/durable, each test's store in a directory of its own,
// synced to disk as in production).
const storageEnv = "KAPI_CONFORMANCE_STORAGE"

// backend is the value of storageEnv, checked by TestMain.
var backend = os.Getenv(storageEnv)

func TestMain(m *testing.M) {
	switch backend {
	case "", "memory", "etcd3", "cache+etcd3", "durable":
	default:
		fmt.Fprintf(os.Stderr, "%s=%q: want memory, etcd3, cache+etcd3 or durable\n", storageEnv, backend)
		os.Exit(2)
	}
	// The reference kube-apiserver (kube_test.go) logs through klog, a lot
	// (informers of the core API it cannot reach, for one): keep the test
	// output readable. Set before any test runs, as kubectl reads klog's
	// settings concurrently.
	klog.SetLogger(logr.Discard())
	code := m.Run()
	stopKube()
	stopKubeAPIServer()
	if shared.srv != nil {
		shared.srv.Close()
	}
	os.Exit(code)
}

// onEtcd3 reports whether the tests run on the etcd3 backend (behind the
// watch cache or not).
func onEtcd3() bool { return backend == "etcd3" || backend == "cache+etcd3" }

// cached puts kapi's watch cache in front of s when the tests run on
// cache+etcd3 (with the Wait s has), and returns s otherwise.
func cached(t *testing.T, s storage.Interface, wait time.Duration) storage.Interface {
	t.Helper()
	if backend != "cache+etcd3" {
		return s
	}
	c, err := cache.New(s, cache.Options{Wait: wait})
	if err != nil {
		t.Fatalf("cache.New: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// withStorage returns opts with Storage set to a fresh, empty store of the
// selected backend, closed when the test ends (nil, which the example server
// reads as a fresh in-memory store, on the memory backend).
func withStorage(t *testing.T, opts server.Options) server.Options {
	t.Helper()
	if opts.Storage == nil && onEtcd3() {
		opts.Storage = cached(t, newEtcdStore(t, sharedEtcd(t), etcd3.Options{}), 0)
	}
	if opts.Storage == nil && backend == "durable" {
		opts.Storage = newDurableStore(t, durable.Options{})
	}
	return opts
}

// newDurableStore opens a durable store in a fresh directory, closed when
// the test ends.
func newDurableStore(t *testing.T, opts durable.Options) storage.Interface {
	t.Helper()
	s, err := durable.Open(t.TempDir(), opts)
	if err != nil {
		t.Fatalf("durable.Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("durable store Close: %v", err)
		}
	})
	return s
}

// shared is the embedded etcd the tests of this process share, started by
// the first test that needs it.
var shared struct {
	once sync.Once
	srv  *etcdServer
	err  error
}

func sharedEtcd(t *testing.T) *etcdServer {
	t.Helper()
	shared.once.Do(func() { shared.srv, shared.err = startEtcd() })
	if shared.err != nil {
		t.Fatalf("embedded etcd: %v", shared.err)
	}
	return shared.srv
}

// ownEtcd starts an embedded etcd for this test alone, for tests whose
// assertions need a revision sequence nothing else writes to (compaction
// is global to an etcd cluster). It is closed when the test ends.
func ownEtcd(t *testing.T) *etcdServer {
	t.Helper()
	srv, err := startEtcd()
	if err != nil {
		t.Fatalf("embedded etcd: %v", err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// prefixes numbers the key prefixes of the stores on the shared etcd.
var prefixes atomic.Int64

// newEtcdStore returns an etcd3 store with a key prefix of its own on srv,
// closed when the test ends.
func newEtcdStore(t *testing.T, srv *etcdServer, opts etcd3.Options) storage.Interface {
	t.Helper()
	opts.Client = srv.Client
	opts.Prefix = fmt.Sprintf("/conformance/%d", prefixes.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	s, err := etcd3.New(ctx, opts)
	if err != nil {
		t.Fatalf("etcd3.New: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// etcdServer is a single-member embedded etcd and a client of it.
type etcdServer = inprocess.Etcd

// startEtcd starts one, without fsync: a test's data need not survive a
// crash.
func startEtcd() (*etcdServer, error) {
	return inprocess.StartEtcd(inprocess.EtcdOptions{ReadyTimeout: waitTimeout})
}
