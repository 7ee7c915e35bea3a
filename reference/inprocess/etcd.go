package inprocess

import (
	"fmt"
	"net/url"
	"os"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// EtcdOptions say how to run an embedded etcd.
type EtcdOptions struct {
	// Fsync syncs every write, as etcd runs in production; off, a test's
	// data need not survive a crash (kube's integration tests run so).
	Fsync bool
	// ReadyTimeout bounds the wait for the server (30 s when zero).
	ReadyTimeout time.Duration
}

// Etcd is a single-member etcd running in this process, and a client of
// it. Its fields are read-only.
type Etcd struct {
	Server   *embed.Etcd
	Client   *clientv3.Client
	Endpoint string // http://127.0.0.1:PORT
	dir      string
}

// StartEtcd starts an etcd in a temporary directory, on free ports of
// 127.0.0.1 only, with its logs off, and waits until it is ready.
func StartEtcd(opts EtcdOptions) (*Etcd, error) {
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 30 * time.Second
	}
	dir, err := os.MkdirTemp("", "kapi-reference-etcd-")
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
	cfg.UnsafeNoFsync = !opts.Fsync
	cfg.EnableGRPCGateway = false
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(opts.ReadyTimeout):
		e.Close()
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("inprocess: embedded etcd not ready after %s", opts.ReadyTimeout)
	}
	endpoint := "http://" + e.Clients[0].Addr().String()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		e.Close()
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return &Etcd{Server: e, Client: c, Endpoint: endpoint, dir: dir}, nil
}

// Close stops the client and the server and removes the data.
func (e *Etcd) Close() {
	_ = e.Client.Close()
	e.Server.Close()
	_ = os.RemoveAll(e.dir)
}
