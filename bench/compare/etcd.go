package compare

import "github.com/kapi-dev/kapi/reference/inprocess"

// Etcd is a single-member etcd running in this process, and a client of
// it (the reference module's inprocess package).
type Etcd = inprocess.Etcd

// StartEtcd starts an embedded etcd without fsync (the data need not
// survive a crash; kube-apiserver's own integration tests do the same).
func StartEtcd() (*Etcd, error) { return inprocess.StartEtcd(inprocess.EtcdOptions{}) }

// StartEtcdSynced is StartEtcd with fsync on, as etcd runs in production:
// for comparisons with a store that syncs its writes (storage/durable).
func StartEtcdSynced() (*Etcd, error) { return inprocess.StartEtcd(inprocess.EtcdOptions{Fsync: true}) }
