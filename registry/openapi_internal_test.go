package registry

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestServeContentAsServeContent: serveContent answers every request as
// http.ServeContent does (code, headers, body), whether it writes the
// body itself (a plain GET or HEAD) or hands the request on.
func TestServeContentAsServeContent(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789ABCDEF"), 4096)
	modified := time.Date(2026, 11, 26, 15, 0, 0, 0, time.UTC)
	tests := []struct {
		name, method string
		modified     time.Time
		header       []string
	}{
		{"GET", "GET", modified, nil},
		{"GET, no modification time", "GET", time.Time{}, nil},
		{"HEAD", "HEAD", modified, nil},
		{"GET with its ETag", "GET", modified, []string{"If-None-Match", `"E1"`}},
		{"GET with another ETag", "GET", modified, []string{"If-None-Match", `"E2"`}},
		{"GET, not modified since", "GET", modified, []string{"If-Modified-Since", modified.Format(http.TimeFormat)}},
		{"GET, modified since", "GET", modified, []string{"If-Modified-Since", modified.Add(-time.Hour).Format(http.TimeFormat)}},
		{"GET of a range", "GET", modified, []string{"Range", "bytes=10-19"}},
		{"GET of two ranges", "GET", modified, []string{"Range", "bytes=0-1,5-6"}},
		{"POST", "POST", modified, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answer := func(serve func(w http.ResponseWriter, req *http.Request)) *httptest.ResponseRecorder {
				req := httptest.NewRequest(tt.method, "/openapi/v3", nil)
				for i := 0; i < len(tt.header); i += 2 {
					req.Header.Set(tt.header[i], tt.header[i+1])
				}
				w := httptest.NewRecorder()
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Etag", `"E1"`)
				serve(w, req)
				if ct := w.Header().Get("Content-Type"); strings.HasPrefix(ct, "multipart/byteranges;") {
					w.Header().Set("Content-Type", "multipart/byteranges") // its boundary is random
				}
				return w
			}
			got := answer(func(w http.ResponseWriter, req *http.Request) { serveContent(w, req, "/openapi/v3", tt.modified, body) })
			want := answer(func(w http.ResponseWriter, req *http.Request) {
				http.ServeContent(w, req, "/openapi/v3", tt.modified, bytes.NewReader(body))
			})
			if got.Code != want.Code || !reflect.DeepEqual(got.Header(), want.Header()) {
				t.Errorf("got %d %v; want %d %v", got.Code, got.Header(), want.Code, want.Header())
			}
			if ct := want.Header().Get("Content-Type"); ct == "application/json" && !bytes.Equal(got.Body.Bytes(), want.Body.Bytes()) {
				t.Errorf("body: got %d bytes; want %d", got.Body.Len(), want.Body.Len())
			}
		})
	}
}
