package etcd3_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/etcd3"
	"github.com/kapi-dev/kapi/storage/storagetest"
)

// The package's tests share a small pool of embedded etcd servers,
// started once by TestMain. A test takes a server from the pool for its
// whole run and gives it back in its cleanup, with a fresh key prefix per
// store. A server serves one test at a time because etcd's revision is
// global and storagetest checks revisions exactly ("a fresh, empty store
// that nothing else writes to"): two tests writing to one etcd would see
// each other's revisions, and Compact is global too. Two servers keep
// both cores of a small CI machine busy.
const servers = 2

var pool = make(chan *server, servers)

// endpoint is the client URL of one of the servers, for the Example.
var endpoint string

type server struct {
	etcd   *embed.Etcd
	client *clientv3.Client
	dir    string
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	started := make(chan error, servers)
	for range servers {
		go func() {
			srv, err := startEtcd()
			if err == nil {
				pool <- srv
			}
			started <- err
		}()
	}
	failed := false
	for range servers {
		if err := <-started; err != nil {
			fmt.Fprintln(os.Stderr, "embedded etcd:", err)
			failed = true
		}
	}
	defer func() {
		for range len(pool) {
			srv := <-pool
			_ = srv.client.Close()
			srv.etcd.Close()
			_ = os.RemoveAll(srv.dir)
		}
	}()
	if failed {
		return 1
	}
	srv := <-pool
	endpoint = srv.etcd.Clients[0].Addr().String()
	pool <- srv
	return m.Run()
}

// startEtcd starts a single-member etcd in a temporary directory,
// listening on free ports of 127.0.0.1 only, with its logs off.
func startEtcd() (*server, error) {
	dir, err := os.MkdirTemp("", "kapi-etcd3-test-")
	if err != nil {
		return nil, err
	}
	local := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.ListenClientUrls = []url.URL{local}
	cfg.AdvertiseClientUrls = []url.URL{local}
	cfg.ListenPeerUrls = []url.URL{local}
	cfg.AdvertisePeerUrls = []url.URL{local}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{os.DevNull}
	cfg.UnsafeNoFsync = true // a test's data need not survive a crash
	cfg.EnableGRPCGateway = false
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		e.Close()
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("not ready after 30s")
	}
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{e.Clients[0].Addr().String()},
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		e.Close()
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return &server{etcd: e, client: c, dir: dir}, nil
}

var stores atomic.Int64

// newStore returns a Store with a prefix of its own on a server of the
// pool, which the test holds until its cleanup.
func newStore(t *testing.T, opts etcd3.Options) *etcd3.Store {
	t.Helper()
	srv := <-pool
	t.Cleanup(func() { pool <- srv })
	opts.Client = srv.client
	opts.Prefix = fmt.Sprintf("/test%d", stores.Add(1))
	if opts.Wait == 0 {
		opts.Wait = 100 * time.Millisecond
	}
	s, err := etcd3.New(t.Context(), opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestConformance runs the shared storage suite against etcd.
func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Interface {
		return newStore(t, etcd3.Options{})
	})
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}
