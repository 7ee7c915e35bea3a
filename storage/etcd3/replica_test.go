package etcd3_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	apiserver "github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage/etcd3"
)

// replicas starts n example servers, each with its own etcd client and
// Store, on one etcd server of the pool and one key prefix, as n
// processes sharing an etcd cluster would be, and returns their URLs.
func replicas(t *testing.T, n int) []string {
	t.Helper()
	srv := <-pool
	t.Cleanup(func() { pool <- srv })
	prefix := fmt.Sprintf("/test%d", stores.Add(1))
	tokens := rv.NewTokens() // replicas share the continue-token secret
	urls := make([]string, n)
	for i := range n {
		c, err := clientv3.New(clientv3.Config{
			Endpoints:   []string{srv.etcd.Clients[0].Addr().String()},
			DialTimeout: 5 * time.Second,
			Logger:      zap.NewNop(),
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		st, err := etcd3.New(t.Context(), etcd3.Options{Client: c, Prefix: prefix, Tokens: tokens})
		if err != nil {
			t.Fatal(err)
		}
		reg, err := apiserver.New(apiserver.Options{Storage: st})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(reg)
		t.Cleanup(hs.Close)
		t.Cleanup(st.Close) // ends open watches first, so hs.Close does not wait on them
		urls[i] = hs.URL
	}
	return urls
}

// TestReplicasReadYourWrites: what one replica writes, the other reads at
// once, and a list paginated on one continues on the other.
func TestReplicasReadYourWrites(t *testing.T) {
	urls := replicas(t, 2)
	a, b := urls[0], urls[1]
	created := mustDo(t, http.MethodPost, a+cmPath, configMap("one", "1"), http.StatusCreated)
	got := mustDo(t, http.MethodGet, b+cmPath+"/one", nil, http.StatusOK)
	if got.Metadata.ResourceVersion != created.Metadata.ResourceVersion || got.Data["v"] != "1" {
		t.Errorf("get on b: got rv %s data %v; want rv %s data v=1", got.Metadata.ResourceVersion, got.Data, created.Metadata.ResourceVersion)
	}
	upd := configMap("one", "2")
	upd["metadata"].(map[string]any)["resourceVersion"] = got.Metadata.ResourceVersion
	updated := mustDo(t, http.MethodPut, b+cmPath+"/one", upd, http.StatusOK)
	// A stale resourceVersion is a conflict on either replica.
	mustDo(t, http.MethodPut, a+cmPath+"/one", upd, http.StatusConflict)
	if got := mustDo(t, http.MethodGet, a+cmPath+"/one", nil, http.StatusOK); got.Metadata.ResourceVersion != updated.Metadata.ResourceVersion {
		t.Errorf("get on a after update on b: got rv %s; want %s", got.Metadata.ResourceVersion, updated.Metadata.ResourceVersion)
	}

	for i := range 4 {
		mustDo(t, http.MethodPost, a+cmPath, configMap(fmt.Sprintf("page-%d", i), "x"), http.StatusCreated)
	}
	first := mustDo(t, http.MethodGet, a+cmPath+"?limit=2", nil, http.StatusOK)
	if first.Metadata.Continue == "" {
		t.Fatalf("first page on a: no continue token")
	}
	mustDo(t, http.MethodDelete, a+cmPath+"/page-3", nil, http.StatusOK) // after the snapshot
	var names []string
	for _, it := range first.Items {
		names = append(names, it.Metadata.Name)
	}
	rest := mustDo(t, http.MethodGet, b+cmPath+"?limit=10&continue="+first.Metadata.Continue, nil, http.StatusOK)
	for _, it := range rest.Items {
		names = append(names, it.Metadata.Name)
	}
	want := []string{"one", "page-0", "page-1", "page-2", "page-3"}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("list paginated a then b: got %v; want %v (the first page's snapshot)", names, want)
	}
	if rest.Metadata.ResourceVersion != first.Metadata.ResourceVersion {
		t.Errorf("second page on b: got rv %s; want the first page's %s", rest.Metadata.ResourceVersion, first.Metadata.ResourceVersion)
	}
}

// write is one acknowledged write: the object and the resourceVersion
// the response carried (empty for deletes, whose answer is the last
// state).
type write struct {
	name, typ, rv string
}

// TestReplicasConcurrentWriters: writers on both replicas create, update
// and delete objects at once; a watcher on each replica, started from a
// list's resourceVersion on the other, sees every write exactly once, in
// one resourceVersion order, the same on both.
func TestReplicasConcurrentWriters(t *testing.T) {
	const writers, objects = 4, 8 // per replica
	urls := replicas(t, 2)
	for i := range 2 { // something to list first
		mustDo(t, http.MethodPost, urls[i]+cmPath, configMap(fmt.Sprintf("before-%d", i), "x"), http.StatusCreated)
	}
	var watches []*watchStream
	for i := range urls {
		list := mustDo(t, http.MethodGet, urls[1-i]+cmPath, nil, http.StatusOK)
		watches = append(watches, startWatch(t, urls[i]+cmPath, list.Metadata.ResourceVersion))
	}

	var mu sync.Mutex
	var acked []write
	var wg sync.WaitGroup
	for r, url := range urls {
		for w := range writers {
			wg.Go(func() {
				for o := range objects {
					name := fmt.Sprintf("r%d-w%d-o%d", r, w, o)
					c, err1 := tryDo(t, http.MethodPost, url+cmPath, configMap(name, "1"), http.StatusCreated)
					// The update goes through the other replica.
					u, err2 := tryDo(t, http.MethodPut, urls[1-r]+cmPath+"/"+name, configMap(name, "2"), http.StatusOK)
					_, err3 := tryDo(t, http.MethodDelete, url+cmPath+"/"+name, nil, http.StatusOK)
					if err := errors.Join(err1, err2, err3); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					acked = append(acked, write{name, "ADDED", c.Metadata.ResourceVersion},
						write{name, "MODIFIED", u.Metadata.ResourceVersion}, write{name, "DELETED", ""})
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	total := len(acked)
	if total != 2*writers*objects*3 {
		t.Fatalf("got %d acknowledged writes; want %d", total, 2*writers*objects*3)
	}
	want := map[string][]write{} // per object, in order
	for _, w := range acked {
		want[w.name] = append(want[w.name], w)
	}

	var seqs [][]write
	for i, ws := range watches {
		var seq []write
		var last uint64
		deadline := time.After(20 * time.Second)
		for len(seq) < total {
			select {
			case ev, ok := <-ws.C:
				if !ok {
					t.Fatalf("watch on replica %d ended after %d events; want %d", i, len(seq), total)
				}
				if ev.Type == "BOOKMARK" {
					continue
				}
				if ev.Type != "ADDED" && ev.Type != "MODIFIED" && ev.Type != "DELETED" {
					t.Fatalf("watch on replica %d: got %s %+v", i, ev.Type, ev.Object)
				}
				n, err := strconv.ParseUint(ev.Object.Metadata.ResourceVersion, 10, 64)
				if err != nil || n <= last {
					t.Fatalf("watch on replica %d: got rv %q after %d; want strictly increasing", i, ev.Object.Metadata.ResourceVersion, last)
				}
				last = n
				seq = append(seq, write{ev.Object.Metadata.Name, ev.Type, ev.Object.Metadata.ResourceVersion})
			case <-deadline:
				t.Fatalf("watch on replica %d: got %d events within 20s; want %d", i, len(seq), total)
			}
		}
		ws.stop()
		seqs = append(seqs, seq)

		got := map[string][]write{}
		for _, w := range seq {
			got[w.name] = append(got[w.name], w)
		}
		for name, ws := range want {
			g := got[name]
			if len(g) != len(ws) {
				t.Errorf("replica %d, %s: got %d events %v; want %d", i, name, len(g), g, len(ws))
				continue
			}
			for j := range ws {
				if g[j].typ != ws[j].typ || (ws[j].rv != "" && g[j].rv != ws[j].rv) {
					t.Errorf("replica %d, %s: event %d: got %s rv %s; want %s rv %s", i, name, j, g[j].typ, g[j].rv, ws[j].typ, ws[j].rv)
				}
			}
		}
		if len(got) != len(want) {
			t.Errorf("replica %d: got events for %d objects; want %d", i, len(got), len(want))
		}
	}
	for j := range seqs[0] {
		if seqs[0][j] != seqs[1][j] {
			t.Fatalf("event %d: replica 0 got %v, replica 1 got %v; want one sequence", j, seqs[0][j], seqs[1][j])
		}
	}
}
