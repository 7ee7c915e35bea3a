package compare

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestRunSmall runs every scenario, scaled down, on the in-memory kapi
// peers (the Go API, over HTTP, and client-go through the registry's
// in-process transport) and checks the figures that must hold for a
// correct store: nothing lost, every event delivered, no watcher ended,
// the list's bytes counted wherever client-go reads them. The apiextensions-apiserver
// peer (an etcd and a server start) is left to cmd/compare.
func TestRunSmall(t *testing.T) {
	cfg := Config{
		N: 60, UpdateWorkers: 3, UpdatesEach: 5,
		Watchers: 4, WatchWrites: 20,
		ManyWatchers: 12, ManyWrites: 10,
		PacedRate: 200, PacedWrites: 20,
		StallReaders: 2, StallWrites: 50,
		PageSize: 25, WriteLimit: 20 * time.Second,
	}
	for _, info := range []PeerInfo{KapiMemory(), KapiHTTP(), KapiInProcess()} {
		t.Run(info.Name, func(t *testing.T) {
			results := Run(context.Background(), cfg, []PeerInfo{info})
			if results[0].Err != nil {
				t.Fatalf("run: %v", results[0].Err)
			}
			fig := results[0].Figures
			want := map[string]string{
				"lost":       "0",
				"wdelivered": fmt.Sprintf("%d / %d", 20*4, 20*4),
				"wended":     "0",
				"mdelivered": fmt.Sprintf("%d / %d", 10*12, 10*12),
				"mended":     "0",
				"pdelivered": fmt.Sprintf("%d / %d", 20*4, 20*4),
				"pended":     "0",
				"sdelivered": fmt.Sprintf("%d / %d", 50*2, 50*2),
				"sended":     "0",
				"spanics":    "0",
				"pages":      "(3 pages)",
			}
			for k, v := range want {
				if !strings.Contains(fig[k], v) {
					t.Errorf("%s: got %q; want %q", k, fig[k], v)
				}
			}
			// The pace holds: 20 writes at 200/s take ≥ 95 ms.
			if got, err := strconv.ParseFloat(fig["pwrites"], 64); err != nil || got > 210 {
				t.Errorf("pwrites: got %q; want at most 210 writes/s (paced at 200)", fig["pwrites"])
			}
			// 50 writes fit in every buffer: the stalled watcher gets them all.
			if got, want := fig["sstalled"], "not ended: all 50, late"; got != want {
				t.Errorf("sstalled: got %q; want %q", got, want)
			}
			for _, k := range []string{"listmbs", "listraw"} {
				_, http := fig[k]
				if got, want := http, info.Name != "kapi memory"; got != want {
					t.Errorf("%s present: got %v; want %v (%q)", k, got, want, fig[k])
				}
			}
		})
	}
}

// stuckWatcher gives n stamped events, then blocks until stopped, or ends
// if end is set.
type stuckWatcher struct {
	n    int
	end  bool
	stop chan struct{}
}

func (w *stuckWatcher) Next() (*unstructured.Unstructured, bool) {
	if w.n > 0 {
		w.n--
		u := Widget(0)
		setSpecInt(u, "sentAt", 1)
		return u, true
	}
	if !w.end {
		<-w.stop
	}
	return nil, false
}

func (w *stuckWatcher) Stop() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
}

func TestReadStalled(t *testing.T) {
	tests := []struct {
		name string
		w    *stuckWatcher
		want string
	}{
		{"all", &stuckWatcher{n: 5}, "not ended: all 5, late"},
		{"ended", &stuckWatcher{n: 2, end: true}, "ended by the store (had 2 of 5)"},
		{"silent", &stuckWatcher{n: 3}, "not ended: 3 of 5, then silent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.w.stop = make(chan struct{})
			if got := readStalled(tt.w, 5); got != tt.want {
				t.Errorf("got %q; want %q", got, tt.want)
			}
		})
	}
}
