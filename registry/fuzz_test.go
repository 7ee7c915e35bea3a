package registry_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/storage/memory"
)

// FuzzWriteBodies sends arbitrary bodies to create, update and both patch
// types: the answer is never a 5xx, always JSON, and a success returns an
// object that reads back as stored.
func FuzzWriteBodies(f *testing.F) {
	for _, seed := range []string{
		`{"metadata":{"name":"a"},"spec":{"color":"red"}}`,
		`{"metadata":{"name":"a","labels":{"x":"y"}},"spec":{"n":1e400}}`,
		`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"a","finalizers":["x/y"]}}`,
		`[{"op":"add","path":"/spec/x","value":{"a":[1,2]}}]`,
		`{"metadata":{"name":"a","annotations":{"k":"v"}},"status":null}`,
		`{"metadata":"x"}`, `null`, `{`, `"str"`, `{"a":1}{"b":2}`,
	} {
		f.Add([]byte(seed))
	}
	reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
	if err != nil {
		f.Fatal(err)
	}
	if err := reg.Register(widgets()); err != nil {
		f.Fatal(err)
	}
	reg.ServeHTTP(httptest.NewRecorder(), request("POST", widgetsPath, "application/json", []byte(`{"metadata":{"name":"a"}}`)))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, rq := range []*http.Request{
			request("POST", widgetsPath, "application/json", body),
			request("PUT", widgetsPath+"/a", "application/json", body),
			request("PATCH", widgetsPath+"/a", "application/merge-patch+json", body),
			request("PATCH", widgetsPath+"/a", "application/json-patch+json", body),
		} {
			w := httptest.NewRecorder()
			reg.ServeHTTP(w, rq)
			if w.Code >= 500 {
				t.Fatalf("%s %s: got %d: %s", rq.Method, rq.URL, w.Code, w.Body)
			}
			var out map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
				t.Fatalf("%s %s: answer is not JSON: %v: %s", rq.Method, rq.URL, err, w.Body)
			}
			if w.Code < 300 {
				name := str(out, "metadata.name")
				g := httptest.NewRecorder()
				reg.ServeHTTP(g, request("GET", widgetsPath+"/"+name, "", nil))
				if g.Code != 200 || !bytes.Equal(g.Body.Bytes(), w.Body.Bytes()) {
					t.Fatalf("read back %s: got %d %s; want %s", name, g.Code, g.Body, w.Body)
				}
			}
		}
	})
}

func request(method, path, contentType string, body []byte) *http.Request {
	r := httptest.NewRequest(method, path, bytes.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	return r
}
