package compare

import (
	"context"
	"fmt"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage/cache"
	"github.com/kapi-dev/kapi/storage/etcd3"
	"github.com/kapi-dev/kapi/storage/memory"
)

// KapiCacheMemory is kapi's watch cache (storage/cache) in front of the
// memory store.
func KapiCacheMemory() PeerInfo {
	return PeerInfo{
		Name: "kapi cache+memory",
		What: "storage/cache over storage/memory; get at rv.Any (the cacher column's resourceVersion=0), lists consistent from the cache, pages from the cache's snapshots (continue tokens in the backend's keys)",
		Start: func(context.Context, *Etcd) (Peer, error) {
			c, err := cache.New(memory.New(memory.Options{}), cache.Options{}) // the cache takes the store's tokens
			if err != nil {
				return nil, err
			}
			return &kapiPeer{s: c, close: c.Close, getMatch: rv.Any}, nil
		},
	}
}

// KapiCacheEtcd3 is kapi's watch cache in front of its etcd3 backend on
// the embedded etcd.
func KapiCacheEtcd3() PeerInfo {
	return PeerInfo{
		Name:      "kapi cache+etcd3",
		What:      "storage/cache over storage/etcd3 on the embedded etcd; reads as kapi cache+memory",
		NeedsEtcd: true,
		Start: func(ctx context.Context, e *Etcd) (Peer, error) {
			s, err := etcd3.New(ctx, etcd3.Options{Client: e.Client, Prefix: fmt.Sprintf("/kapi-bench/%d", etcdPrefixes.Add(1))})
			if err != nil {
				return nil, err
			}
			c, err := cache.New(s, cache.Options{})
			if err != nil {
				s.Close()
				return nil, err
			}
			return &kapiPeer{s: c, close: func() { c.Close(); s.Close() }, getMatch: rv.Any}, nil
		},
	}
}
