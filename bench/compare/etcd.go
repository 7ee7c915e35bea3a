package compare

import (
	"fmt"
	"net/url"
	"os"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
)

// Etcd is a single-member etcd running in this process, and a client of it.
type Etcd struct {
	Server   *embed.Etcd
	Client   *clientv3.Client
	Endpoint string
	dir      string
}

// StartEtcd starts an embedded etcd in a temporary directory on free
// loopback ports, with its logs off and without fsync (the data need not
// survive a crash; kube-apiserver's own integration tests do the same).
func StartEtcd() (*Etcd, error) { return startEtcd(false) }

// StartEtcdSynced is StartEtcd with fsync on, as etcd runs in production:
// for comparisons with a store that syncs its writes (storage/durable).
func StartEtcdSynced() (*Etcd, error) { return startEtcd(true) }

func startEtcd(fsync bool) (*Etcd, error) {
	dir, err := os.MkdirTemp("", "kapi-bench-etcd-")
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
	cfg.UnsafeNoFsync = !fsync
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
		return nil, fmt.Errorf("embedded etcd not ready after 30s")
	}
	endpoint := "http://" + e.Clients[0].Addr().String()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second})
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
