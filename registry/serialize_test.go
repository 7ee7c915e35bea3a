package registry

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/codec/protobuf"
	"github.com/kapi-dev/kapi/registry/internal/negotiate"
	"github.com/kapi-dev/kapi/storage/memory"
)

// TestSerializeOnce counts encodings: one stored state seen by many
// watchers and lists in each format is encoded once per format.
func TestSerializeOnce(t *testing.T) {
	reg, err := New(Options{Storage: memory.New(memory.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	cms := &Resource{Version: "v1", Kind: "ConfigMap", Plural: "configmaps", Namespaced: true, Protobuf: protobuf.ConfigMap}
	if err := reg.Register(cms); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(reg)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	const watchers = 30
	accepts := map[negotiate.Format]string{
		negotiate.JSON:     negotiate.MediaJSON,
		negotiate.Protobuf: negotiate.MediaProtobuf,
		negotiate.CBOR:     negotiate.MediaCBOR,
	}
	var started, got sync.WaitGroup
	for _, accept := range accepts {
		for range watchers {
			started.Add(1)
			got.Add(1)
			go func() {
				defer got.Done()
				req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/v1/namespaces/default/configmaps?watch=true", nil)
				req.Header.Set("Accept", accept)
				resp, err := http.DefaultClient.Do(req)
				started.Done()
				if err != nil {
					t.Error(err)
					return
				}
				defer resp.Body.Close()
				// Any byte means the event arrived: each stream carries
				// only the one event.
				if _, err := bufio.NewReader(resp.Body).Peek(1); err != nil && err != io.EOF {
					t.Error(err)
				}
			}()
		}
	}
	started.Wait()
	time.Sleep(100 * time.Millisecond) // let the watches reach the store (not an assertion)
	for i := range reg.encodes {
		reg.encodes[i].Store(0)
		reg.frames[i].Store(0)
	}
	resp, err := http.Post(srv.URL+"/api/v1/namespaces/default/configmaps", "application/json",
		strings.NewReader(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got.Wait()
	for range 5 { // lists and gets of the same state reuse the encodings
		for _, accept := range accepts {
			for _, p := range []string{"", "/a"} {
				req, _ := http.NewRequest("GET", srv.URL+"/api/v1/namespaces/default/configmaps"+p, nil)
				req.Header.Set("Accept", accept)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	}
	for f := range accepts {
		want := int64(1)
		if f == negotiate.JSON {
			want = 0 // served from the stored bytes, resourceVersion spliced in
		}
		if n := reg.encodes[f].Load(); n != want {
			t.Errorf("%s: %d encodings of one object for %d watchers, 5 lists and 5 gets; want %d", f, n, watchers, want)
		}
		if n := reg.frames[f].Load(); n != 1 {
			t.Errorf("%s: %d framings of one watch event for %d watchers; want 1", f, n, watchers)
		}
	}
}
