package compare

import (
	"context"
	"os"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage/durable"
)

// KapiDurable is kapi's durable store (storage/durable) in a temporary
// directory, removed on Close. It is not among Peers (the bench-compare
// table); BenchmarkDurable sets it beside etcd with fsync on.
func KapiDurable() PeerInfo {
	return PeerInfo{
		Name: "kapi durable",
		What: "storage/durable (pebble, every write synced, group commit) in a temporary directory; same encoding as kapi memory",
		Start: func(context.Context, *Etcd) (Peer, error) {
			dir, err := os.MkdirTemp("", "kapi-bench-durable-")
			if err != nil {
				return nil, err
			}
			s, err := durable.Open(dir, durable.Options{})
			if err != nil {
				os.RemoveAll(dir)
				return nil, err
			}
			return durablePeer{&kapiPeer{s: s, close: func() { s.Close(); os.RemoveAll(dir) }, getMatch: rv.MostRecent}, s}, nil
		},
	}
}

// durablePeer is kapiPeer on the durable store, with its commit counts.
type durablePeer struct {
	*kapiPeer
	store *durable.Store
}

// CommitStats are the store's commit counts (BenchmarkDurable reports
// writes a commit and the disk's time a commit from them).
func (p durablePeer) CommitStats() durable.Stats { return p.store.Stats() }
