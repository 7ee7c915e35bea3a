package registry

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	fxcbor "github.com/fxamacker/cbor/v2"

	"github.com/kapi-dev/kapi/codec/protobuf"
	"github.com/kapi-dev/kapi/registry/internal/negotiate"
	"github.com/kapi-dev/kapi/storage/memory"
)

// The format benchmarks serve core/v1 configmaps (with their protobuf
// message) over a loopback HTTP server. Bodies are read, not decoded: they
// measure the server.

var benchAccepts = []struct{ name, accept string }{
	{"json", negotiate.MediaJSON},
	{"protobuf", negotiate.MediaProtobuf},
	{"cbor", negotiate.MediaCBOR},
}

func newFormatBench(b *testing.B) (*Registry, string) {
	b.Helper()
	reg, err := New(Options{Storage: memory.New(memory.Options{})})
	if err != nil {
		b.Fatal(err)
	}
	if err := reg.Register(&Resource{Version: "v1", Kind: "ConfigMap", Plural: "configmaps", Namespaced: true, Protobuf: protobuf.ConfigMap}); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(reg)
	b.Cleanup(srv.Close)
	return reg, srv.URL
}

// benchConfigMap is a configmap of about 2 KiB.
func benchConfigMap(name string) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"labels":{"app":"bench","tier":"backend"}},"data":{"a":%q,"b":%q}}`,
		name, strings.Repeat("x", 900), strings.Repeat("y", 900))
}

func post(b *testing.B, url, body string) {
	resp, err := http.Post(url+"/api/v1/namespaces/default/configmaps", negotiate.MediaJSON, strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		b.Fatalf("create: %d", resp.StatusCode)
	}
}

// BenchmarkListFormats lists 10k configmaps (~2 KiB each) whole, per
// format. After the first list every item encoding comes from the cache.
func BenchmarkListFormats(b *testing.B) {
	_, url := newFormatBench(b)
	for i := range 10000 {
		post(b, url, benchConfigMap(fmt.Sprintf("cm-%05d", i)))
	}
	// Go's transport asks for gzip unless told not to; the gzip case shows
	// what that costs (client-go's default: kube compresses lists too).
	plain := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	gzipped := &http.Client{Transport: &http.Transport{}}
	cases := append(benchAccepts, struct{ name, accept string }{"json+gzip", negotiate.MediaJSON})
	for _, f := range cases {
		client := plain
		if strings.HasSuffix(f.name, "gzip") {
			client = gzipped
		}
		b.Run(f.name, func(b *testing.B) {
			var n int64
			for b.Loop() {
				req, _ := http.NewRequest("GET", url+"/api/v1/namespaces/default/configmaps", nil)
				req.Header.Set("Accept", f.accept)
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				n, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			b.ReportMetric(float64(n)/(1<<20), "MiB/list")
		})
	}
}

// BenchmarkWatchFanoutFormats writes one configmap per iteration to 1000
// watchers of one format and waits until every watcher has its event. It
// reports the encodings and event framings per event: 1 each (0 encodings
// for JSON, served from the stored bytes), whatever the watcher count.
func BenchmarkWatchFanoutFormats(b *testing.B) {
	const watchers = 1000
	for _, f := range benchAccepts {
		b.Run(f.name, func(b *testing.B) {
			reg, url := newFormatBench(b)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			tr := &http.Transport{MaxIdleConnsPerHost: watchers, MaxConnsPerHost: watchers + 10}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr}
			got := make(chan struct{}, watchers)
			var ready, done sync.WaitGroup
			for range watchers {
				ready.Add(1)
				done.Add(1)
				go func() {
					defer done.Done()
					req, _ := http.NewRequestWithContext(ctx, "GET", url+"/api/v1/namespaces/default/configmaps?watch=true", nil)
					req.Header.Set("Accept", f.accept)
					resp, err := client.Do(req)
					ready.Done()
					if err != nil {
						return
					}
					defer resp.Body.Close()
					next := eventReader(f.name, resp.Body)
					for next() == nil {
						select {
						case got <- struct{}{}:
						case <-ctx.Done():
							return
						}
					}
				}()
			}
			ready.Wait()
			body := benchConfigMap("%s")
			reg.encodes[formatOf(f.accept)].Store(0)
			reg.frames[formatOf(f.accept)].Store(0)
			i := 0
			for b.Loop() {
				post(b, url, fmt.Sprintf(body, fmt.Sprint("cm-", i)))
				i++
				for range watchers {
					<-got
				}
			}
			b.ReportMetric(float64(reg.encodes[formatOf(f.accept)].Load())/float64(i), "encodes/event")
			b.ReportMetric(float64(reg.frames[formatOf(f.accept)].Load())/float64(i), "frames/event")
			cancel()
			done.Wait()
		})
	}
}

// eventReader returns a function that reads one whole watch event.
func eventReader(format string, body io.Reader) func() error {
	r := bufio.NewReaderSize(body, 64<<10)
	switch format {
	case "protobuf":
		return func() error {
			var n [4]byte
			if _, err := io.ReadFull(r, n[:]); err != nil {
				return err
			}
			_, err := r.Discard(int(binary.BigEndian.Uint32(n[:])))
			return err
		}
	case "cbor":
		d := fxcbor.NewDecoder(r)
		return func() error {
			var m fxcbor.RawMessage
			return d.Decode(&m)
		}
	}
	return func() error {
		_, err := r.ReadSlice('\n')
		return err
	}
}

func formatOf(mediaType string) negotiate.Format {
	for f, t := range negotiate.Types {
		if t == mediaType {
			return negotiate.Format(f)
		}
	}
	return negotiate.JSON
}

// BenchmarkWatchFanout delivers JSON watch events to 100 and 1000 HTTP
// watchers. "lockstep" writes one configmap and waits until every watcher
// has it (one event pending at a time); "burst" writes b.N configmaps back
// to back and then waits, so events queue up at slow watchers. The writer
// posts through reg.Transport(), so that its writes do not queue behind
// the watchers' sockets. ns/op is per write; writes/s counts writes whose
// event reached every watcher.
// Latencies run from the start of a write's POST to a watcher reading its
// event; allocs/delivery is every allocation of the process (server,
// watchers' readers and the writer) per event per watcher.
func BenchmarkWatchFanout(b *testing.B) {
	for _, watchers := range []int{100, 1000} {
		for _, burst := range []bool{false, true} {
			mode := "lockstep"
			if burst {
				mode = "burst"
			}
			b.Run(fmt.Sprintf("%d/%s", watchers, mode), func(b *testing.B) {
				benchFanout(b, watchers, burst)
			})
		}
	}
}

func benchFanout(b *testing.B, watchers int, burst bool) {
	reg, url := newFormatBench(b)
	writer := &http.Client{Transport: reg.Transport()}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr := &http.Transport{MaxIdleConnsPerHost: watchers, MaxConnsPerHost: watchers + 10}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	n := b.N
	start := make([]atomic.Int64, n) // unix ns at which write k began
	lat := make([][]time.Duration, watchers)
	got := make(chan struct{}, watchers)
	var ready, all, exited sync.WaitGroup
	for w := range watchers {
		lat[w] = make([]time.Duration, 0, n)
		ready.Add(1)
		all.Add(1)
		exited.Add(1)
		go func() {
			defer exited.Done()
			req, _ := http.NewRequestWithContext(ctx, "GET", url+"/api/v1/namespaces/default/configmaps?watch=true", nil)
			resp, err := client.Do(req)
			ready.Done()
			if err != nil {
				all.Done()
				return
			}
			defer resp.Body.Close()
			next := eventReader("json", resp.Body)
			k := 0
			for next() == nil {
				if k < n {
					lat[w] = append(lat[w], time.Duration(time.Now().UnixNano()-start[k].Load()))
				}
				if k++; k == n {
					all.Done()
				}
				if !burst {
					select {
					case got <- struct{}{}:
					case <-ctx.Done():
						return
					}
				}
			}
			if k < n {
				all.Done()
			}
		}()
	}
	ready.Wait()
	body := benchConfigMap("%s")
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	b.ResetTimer()
	for i := range n {
		start[i].Store(time.Now().UnixNano())
		resp, err := writer.Post("http://kapi/api/v1/namespaces/default/configmaps", negotiate.MediaJSON, strings.NewReader(fmt.Sprintf(body, fmt.Sprint("cm-", i))))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			b.Fatalf("create: %d", resp.StatusCode)
		}
		if !burst {
			for range watchers {
				<-got
			}
		}
	}
	all.Wait()
	b.StopTimer()
	runtime.ReadMemStats(&m1)
	var ds []time.Duration
	for _, l := range lat {
		ds = append(ds, l...)
	}
	slices.Sort(ds)
	if len(ds) != n*watchers {
		b.Fatalf("got %d deliveries; want %d", len(ds), n*watchers)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "writes/s")
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(n*watchers), "allocs/delivery")
	cancel()
	exited.Wait()
}
