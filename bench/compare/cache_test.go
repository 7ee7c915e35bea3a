package compare

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
)

// BenchmarkListsInterleaved times the list scenario's reads — a
// consistent whole list and a paged walk (limit 500) — on several peers
// in turn within each iteration, so that every peer sees the same load:
// on a shared machine the medians of interleaved calls compare better
// than runs one after the other. It reports each peer's medians in ms:
// "whole-ms:<peer>" and "pages-ms:<peer>", and what bounds the whole
// list: "revision-ms:<peer>", the backend's current revision a
// consistent read starts with (kapi's Store.Revision, the cacher's
// GetCurrentResourceVersion: one etcd round trip each), and for kapi
// "storelist-ms:<peer>", the storage.Interface list alone (rv.Any: no
// round trip, no conversion to unstructured objects). Select peers with
// -compare.peers, e.g.
//
//	go test ./compare -run XXX -bench ListsInterleaved -benchtime 200x -args \
//	    -compare.n 10000 -compare.peers 'kapi cache+etcd3,apiserver cacher'
func BenchmarkListsInterleaved(b *testing.B) {
	ctx := context.Background()
	type subject struct {
		name                     string
		p                        Peer
		whole, pages, rev, store []time.Duration
	}
	var subjects []*subject
	for _, info := range Peers() {
		if *benchPeers == "" || !strings.Contains(","+*benchPeers+",", ","+info.Name+",") {
			continue
		}
		if info.NeedsEtcd && etcd.e == nil && etcd.err == nil {
			etcd.e, etcd.err = StartEtcd()
		}
		if info.NeedsEtcd && etcd.err != nil {
			b.Fatalf("embedded etcd: %v", etcd.err)
		}
		p, err := info.Start(ctx, etcd.e)
		if err != nil {
			b.Fatalf("start %s: %v", info.Name, err)
		}
		defer p.Close()
		for i := range *benchN {
			if _, err := p.Create(ctx, Widget(i)); err != nil {
				b.Fatalf("preload: %v", err)
			}
		}
		subjects = append(subjects, &subject{name: strings.ReplaceAll(info.Name, " ", "_"), p: p})
	}
	if len(subjects) == 0 {
		b.Skip("no peer selected: set -compare.peers")
	}
	walk := func(p Peer) error {
		opts := ListOptions{Limit: 500}
		for {
			page, err := p.List(ctx, opts)
			if err != nil || page.Continue == "" {
				return err
			}
			opts.Continue = page.Continue
		}
	}
	for b.Loop() {
		for _, s := range subjects {
			start := time.Now()
			l, err := s.p.List(ctx, ListOptions{})
			if err != nil || len(l.Items) != *benchN {
				b.Fatalf("%s: list of %d, %v; want %d items", s.name, len(l.Items), err, *benchN)
			}
			s.whole = append(s.whole, time.Since(start))
			switch p := s.p.(type) {
			case *kapiPeer:
				start = time.Now()
				if _, err := p.s.Revision(ctx); err != nil {
					b.Fatal(err)
				}
				s.rev = append(s.rev, time.Since(start))
				start = time.Now()
				if _, err := p.s.List(ctx, kapiPrefix, storage.ListOptions{Match: rv.Any}); err != nil {
					b.Fatal(err)
				}
				s.store = append(s.store, time.Since(start))
			case *apiserverPeer:
				if r, ok := p.s.(interface {
					GetCurrentResourceVersion(context.Context) (uint64, error)
				}); ok {
					start = time.Now()
					if _, err := r.GetCurrentResourceVersion(ctx); err != nil {
						b.Fatal(err)
					}
					s.rev = append(s.rev, time.Since(start))
				}
			}
			start = time.Now()
			if err := walk(s.p); err != nil {
				b.Fatalf("%s: paged walk: %v", s.name, err)
			}
			s.pages = append(s.pages, time.Since(start))
		}
	}
	for _, s := range subjects {
		b.ReportMetric(median(s.whole).Seconds()*1e3, "whole-ms:"+s.name)
		b.ReportMetric(median(s.pages).Seconds()*1e3, "pages-ms:"+s.name)
		if len(s.rev) > 0 {
			b.ReportMetric(median(s.rev).Seconds()*1e3, "revision-ms:"+s.name)
		}
		if len(s.store) > 0 {
			b.ReportMetric(median(s.store).Seconds()*1e3, "storelist-ms:"+s.name)
		}
	}
}
