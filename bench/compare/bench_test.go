package compare

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var (
	benchN     = flag.Int("compare.n", 1000, "objects preloaded for Get, Update and List")
	benchPeers = flag.String("compare.peers", "", "comma-separated peer names (default: all)")
)

// etcd is the embedded etcd the benchmarks share, started on first use.
var etcd struct {
	e   *Etcd
	err error
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if etcd.e != nil {
		etcd.e.Close()
	}
	os.Exit(code)
}

// peers calls fn for a fresh peer of each kind, as a sub-benchmark.
func peers(b *testing.B, preload int, fn func(b *testing.B, p Peer)) {
	for _, info := range Peers() {
		if *benchPeers != "" && !strings.Contains(","+*benchPeers+",", ","+info.Name+",") {
			continue
		}
		b.Run(strings.ReplaceAll(info.Name, " ", "_"), func(b *testing.B) {
			ctx := context.Background()
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
			for i := range preload {
				if _, err := p.Create(ctx, Widget(i)); err != nil {
					b.Fatalf("preload: %v", err)
				}
			}
			// A consistent list waits until a cache has every preloaded
			// object (a cache's Get may lag behind the writes).
			if _, err := p.List(ctx, ListOptions{LabelSelector: "shard=s00"}); err != nil {
				b.Fatalf("list: %v", err)
			}
			fn(b, p)
		})
	}
}

func BenchmarkCreate(b *testing.B) {
	peers(b, 0, func(b *testing.B, p Peer) {
		ctx := context.Background()
		i := 0
		for b.Loop() { // includes building the object, the same for every peer
			if _, err := p.Create(ctx, Widget(i)); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

func BenchmarkGet(b *testing.B) {
	peers(b, *benchN, func(b *testing.B, p Peer) {
		ctx := context.Background()
		i := 0
		for b.Loop() {
			ns, name := Name(i % *benchN)
			if _, err := p.Get(ctx, ns, name); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkUpdate is one writer's get, change and conditional update.
func BenchmarkUpdate(b *testing.B) {
	peers(b, *benchN, func(b *testing.B, p Peer) {
		ctx := context.Background()
		i := 0
		for b.Loop() {
			ns, name := Name(i % *benchN)
			cur, err := p.Get(ctx, ns, name)
			if err != nil {
				b.Fatal(err)
			}
			cur = cur.DeepCopy()
			setSpecInt(cur, "counter", int64(i))
			if _, err := p.Update(ctx, cur); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

func BenchmarkList(b *testing.B) {
	for _, sel := range []string{"", "shard=s07"} {
		name := "whole"
		if sel != "" {
			name = "label1pct"
		}
		b.Run(name, func(b *testing.B) {
			peers(b, *benchN, func(b *testing.B, p Peer) {
				ctx := context.Background()
				for b.Loop() {
					if _, err := p.List(ctx, ListOptions{LabelSelector: sel}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(*benchN), "ns/stored-object")
			})
		})
	}
}

func ExampleTable() {
	cfg := Config{N: 100, Scenarios: []string{ScenarioCreate, ScenarioGet}}
	results := Run(context.Background(), cfg, []PeerInfo{KapiMemory()})
	table := Table(cfg, results)
	fmt.Println(strings.Contains(table, "| kapi memory |"))
	// Output: true
}
