package compare

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kapi-dev/kapi/storage/durable"
)

// synced is the embedded etcd with fsync on that BenchmarkDurable
// shares, started on first use and closed by TestMain's process exit.
var synced struct {
	once sync.Once
	e    *Etcd
	err  error
}

// BenchmarkDurable: creates and updates per second at 1, 16 and 64
// concurrent writers, every write synced to disk before it returns:
// kapi's durable store beside k8s.io/apiserver's etcd3 store (and kapi's)
// on an embedded etcd with fsync on, its data on the same disk (the
// temporary directory); kapi's memory store beside, for what durability
// costs. An update is a writer's compare-and-swap of its own object (no
// conflicts). Run with -compare.peers to pick peers.
func BenchmarkDurable(b *testing.B) {
	all := []PeerInfo{KapiDurable(), KubeEtcd3(), KapiEtcd3(), KapiMemory()}
	for _, op := range []string{"create", "update"} {
		for _, writers := range []int{1, 16, 64} {
			for _, info := range all {
				if *benchPeers != "" && !strings.Contains(","+*benchPeers+",", ","+info.Name+",") {
					continue
				}
				name := fmt.Sprintf("%s/writers=%d/%s", op, writers, strings.ReplaceAll(info.Name, " ", "_"))
				b.Run(name, func(b *testing.B) { benchWriters(b, info, op, writers) })
			}
		}
	}
}

func benchWriters(b *testing.B, info PeerInfo, op string, writers int) {
	ctx := context.Background()
	var e *Etcd
	if info.NeedsEtcd {
		synced.once.Do(func() { synced.e, synced.err = StartEtcdSynced() })
		if synced.err != nil {
			b.Fatalf("embedded etcd: %v", synced.err)
		}
		e = synced.e
	}
	p, err := info.Start(ctx, e)
	if err != nil {
		b.Fatalf("start %s: %v", info.Name, err)
	}
	defer p.Close()
	// Each writer's update target.
	objs := make([]*unstructured.Unstructured, writers)
	if op == "update" {
		for w := range writers {
			u, err := p.Create(ctx, Widget(w))
			if err != nil {
				b.Fatal(err)
			}
			objs[w] = u
		}
	}
	var next atomic.Int64
	next.Store(int64(writers))
	var wg sync.WaitGroup
	stats, _ := p.(interface{ CommitStats() durable.Stats })
	var before durable.Stats
	if stats != nil {
		before = stats.CommitStats()
	}
	b.ResetTimer()
	start := time.Now()
	for w := range writers {
		n := b.N / writers
		if w < b.N%writers {
			n++
		}
		wg.Go(func() {
			for range n {
				var err error
				switch op {
				case "create":
					_, err = p.Create(ctx, Widget(int(next.Add(1))))
				case "update":
					u := objs[w]
					setSpecInt(u, "counter", specInt(u, "counter")+1)
					objs[w], err = p.Update(ctx, u)
				}
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "writes/s")
	if stats != nil {
		// How many writes shared a sync, and what a commit cost the disk:
		// at N writers, at most N writes a sync, so the disk's time bounds
		// the writes per second (N / disk time).
		after := stats.CommitStats()
		if c := after.Commits - before.Commits; c > 0 {
			b.ReportMetric(float64(after.Writes-before.Writes)/float64(c), "writes/commit")
			b.ReportMetric(float64((after.Disk-before.Disk).Microseconds())/float64(c), "disk-µs/commit")
		}
	}
}
