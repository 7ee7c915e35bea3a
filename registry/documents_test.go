package registry_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/storage/memory"
)

const aggregatedAccept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// kubeHash is the form of kube's document hashes: hex SHA-512, uppercase.
var kubeHash = regexp.MustCompile(`^[0-9A-F]{128}$`)

// thingsIn is a namespaced resource of group g, version v.
func thingsIn(g, v, plural string) *registry.Resource {
	return &registry.Resource{Group: g, Version: v, Kind: "Thing", Plural: plural, Namespaced: true, Custom: true}
}

// URI-4, URI-8, issue 19: the table's documents carry an ETag that a
// client sends back for a 304 until the table changes, as kube's
// aggregated discovery and OpenAPI v3 index do.
func TestDocumentETags(t *testing.T) {
	tests := []struct {
		name, path, accept, cacheControl string
	}{
		{"aggregated /apis", "/apis", aggregatedAccept, "public"},
		{"aggregated /api", "/api", aggregatedAccept, "public"},
		{"openapi v3 index", "/openapi/v3", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			first := s.do("GET", tt.path, nil, "Accept", tt.accept)
			etag := first.header.Get("Etag")
			if first.code != 200 || !kubeHash.MatchString(strings.Trim(etag, `"`)) || !strings.HasPrefix(etag, `"`) {
				t.Fatalf("first GET: %d, Etag %q; want 200 and a quoted uppercase SHA-512", first.code, etag)
			}
			if got := first.header.Get("Cache-Control"); got != tt.cacheControl {
				t.Errorf("Cache-Control: got %q; want %q", got, tt.cacheControl)
			}
			again := s.do("GET", tt.path, nil, "Accept", tt.accept)
			if again.header.Get("Etag") != etag || !bytes.Equal(again.body, first.body) {
				t.Errorf("second GET: Etag %q; want %q and the same body", again.header.Get("Etag"), etag)
			}
			if r := s.do("GET", tt.path, nil, "Accept", tt.accept, "If-None-Match", etag); r.code != 304 || len(r.body) != 0 {
				t.Errorf("If-None-Match of the current Etag: got %d with %d bytes; want 304 and no body", r.code, len(r.body))
			}
			if err := s.reg.Register(thingsIn("etag.example.org", "v1", "things")); err != nil {
				t.Fatal(err)
			}
			if r := s.do("GET", tt.path, nil, "Accept", tt.accept, "If-None-Match", etag); tt.path != "/api" && (r.code != 200 || r.header.Get("Etag") == etag) {
				t.Errorf("after a change, the old Etag: got %d, Etag %q; want 200 and a new Etag", r.code, r.header.Get("Etag"))
			}
		})
	}
}

// indexURL is the serverRelativeURL of gv in the OpenAPI v3 index.
func indexURL(t *testing.T, s *server, gv string) string {
	t.Helper()
	idx := s.must(200, "GET", "/openapi/v3", nil)
	p, _ := idx["paths"].(map[string]any)[gv].(map[string]any)
	u, _ := p["serverRelativeURL"].(string)
	return u
}

// URI-8, issue 19: each group version's entry in the OpenAPI v3 index
// names its document's version with a kube-length hash that changes with
// that group version alone; the hashed URL is immutable, and an old hash
// redirects to the current one (kube-openapi's handler3).
func TestOpenAPIV3Hashes(t *testing.T) {
	s := newServer(t)
	u := indexURL(t, s, "apis/example.com/v1")
	_, hash, _ := strings.Cut(u, "?hash=")
	if !strings.HasPrefix(u, "/openapi/v3/apis/example.com/v1?hash=") || !kubeHash.MatchString(hash) {
		t.Fatalf("index URL %q; want /openapi/v3/apis/example.com/v1?hash=<uppercase SHA-512>", u)
	}
	r := s.do("GET", u, nil)
	if r.code != 200 || r.header.Get("Etag") != `"`+hash+`"` || r.header.Get("Cache-Control") != "public, immutable" || r.header.Get("Expires") == "" {
		t.Errorf("GET %s: %d Etag %q Cache-Control %q Expires %q; want 200, the hash, public, immutable and an Expires",
			u, r.code, r.header.Get("Etag"), r.header.Get("Cache-Control"), r.header.Get("Expires"))
	}
	if r := s.do("GET", "/openapi/v3/apis/example.com/v1", nil); r.code != 200 || r.header.Get("Cache-Control") != "" {
		t.Errorf("GET without a hash: %d Cache-Control %q; want 200 and no caching", r.code, r.header.Get("Cache-Control"))
	}
	// Another group version changes: this one's hash stays.
	if err := s.reg.Register(thingsIn("other.example.org", "v1", "things")); err != nil {
		t.Fatal(err)
	}
	if got := indexURL(t, s, "apis/example.com/v1"); got != u {
		t.Errorf("after another group version changed: %q; want %q", got, u)
	}
	// This group version changes: a new hash, and the old one redirects.
	if err := s.reg.Register(thingsIn("example.com", "v1", "things")); err != nil {
		t.Fatal(err)
	}
	next := indexURL(t, s, "apis/example.com/v1")
	if next == u || next == "" {
		t.Fatalf("after its group version changed: %q; want a new URL", next)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(s.url + u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 301 || resp.Header.Get("Location") != next {
		t.Errorf("GET of the old hash: %d Location %q; want 301 to %q", resp.StatusCode, resp.Header.Get("Location"), next)
	}
}

// getGzip GETs path accepting gzip, and returns the response with its
// body as sent.
func getGzip(t *testing.T, url, accept string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Accept-Encoding", "gzip") // set by hand: the transport then leaves the body compressed
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// URI-4, URI-8: with many groups, aggregated discovery is compressed for
// a client that accepts gzip (kube's responses over 128 KiB), the same
// document as uncompressed; the OpenAPI v3 index never is (kube-openapi
// serves it as it is).
func TestLargeDocumentsCompression(t *testing.T) {
	s := newServer(t)
	for i := range 700 {
		if err := s.reg.Register(thingsIn(fmt.Sprintf("g%04d.many.example.org", i), "v1", "things")); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, path, accept string
		gzip               bool
	}{
		{"aggregated /apis", "/apis", aggregatedAccept, true},
		{"openapi v3 index", "/openapi/v3", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plain := s.do("GET", tt.path, nil, "Accept", tt.accept, "Accept-Encoding", "identity")
			if plain.code != 200 || len(plain.body) <= 128<<10 {
				t.Fatalf("uncompressed: %d, %d bytes; want 200 and over 128 KiB", plain.code, len(plain.body))
			}
			for range 2 { // the compressed form is made once, then reused
				resp, b := getGzip(t, s.url+tt.path, tt.accept)
				if got := resp.Header.Get("Content-Encoding") == "gzip"; got != tt.gzip {
					t.Fatalf("Content-Encoding %q; want gzip: %v", resp.Header.Get("Content-Encoding"), tt.gzip)
				}
				if tt.gzip {
					zr, err := gzip.NewReader(bytes.NewReader(b))
					if err != nil {
						t.Fatal(err)
					}
					if b, err = io.ReadAll(zr); err != nil {
						t.Fatal(err)
					}
				}
				if !bytes.Equal(b, plain.body) {
					t.Errorf("the document as sent compressed differs from the uncompressed one")
				}
			}
		})
	}
}

// ruleErrs is a fake CEL compiler's error listing field errors, as the
// cel module's *CompileError does.
type ruleErrs []schema.FieldError

func (e ruleErrs) Error() string                    { return "rules refused" }
func (e ruleErrs) FieldErrors() []schema.FieldError { return e }

// EXT-7, VAL-1, issue 19: a CRD whose rules the CEL compiler refuses
// (kube's cost limits) answers 422 with the compiler's errors as its
// causes, at spec.validation when every version has the same schema and
// at the version's schema otherwise, as kube's CRD validation reports
// them.
func TestCRDRuleErrorsAsCauses(t *testing.T) {
	refuse := func(*schema.Schema) (schema.Rules, error) {
		return nil, ruleErrs{
			{Type: "FieldValueForbidden", Field: "openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule", Value: "", Detail: "estimated rule cost exceeds budget"},
			{Type: "FieldValueForbidden", Field: "openAPIV3Schema", Value: "", Detail: "estimated rule cost total exceeds budget"},
		}
	}
	rule := map[string]any{"type": "object", "x-kubernetes-validations": []any{map[string]any{"rule": "self.size > 0"}}}
	plain := map[string]any{"type": "object"}
	tests := []struct {
		name     string
		versions []map[string]any
		want     []string // field: type
	}{
		{"one schema for every version", []map[string]any{crdVersion("v1", true, true, map[string]any{"x": rule})}, []string{
			"spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: FieldValueForbidden",
			"spec.validation.openAPIV3Schema: FieldValueForbidden",
		}},
		{"schemas per version", []map[string]any{crdVersion("v1beta1", true, false, map[string]any{"x": plain}), crdVersion("v1", true, true, map[string]any{"x": rule})}, []string{
			"spec.versions[1].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: FieldValueForbidden",
			"spec.versions[1].schema.openAPIV3Schema: FieldValueForbidden",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{}), CEL: refuse})
			if err != nil {
				t.Fatal(err)
			}
			defer reg.Close()
			srv := httptest.NewServer(reg)
			defer srv.Close()
			s := &server{t: t, reg: reg, url: srv.URL}
			r := s.do("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd("rules.example.org", "things", "Thing", tt.versions...))
			if r.code != 422 {
				t.Fatalf("got %d; want 422: %s", r.code, r.body)
			}
			var got []string
			for _, c := range path(r.obj(t), "details.causes").([]any) {
				m := c.(map[string]any)
				got = append(got, fmt.Sprint(m["field"], ": ", m["reason"]))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("causes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// discardWriter is a ResponseWriter that keeps nothing: what
// BenchmarkServeDocuments measures is the server's own work.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}

// BenchmarkServeDocuments is the server's side of a warm fetch of each
// table document with 1,000 group versions (the 1,000 CRDs of
// bench/compare's BenchmarkCRDMany), no socket: what is left of those
// fetches is the client reading the body.
//
//	go test -run XXX -bench ServeDocuments ./registry/
func BenchmarkServeDocuments(b *testing.B) {
	reg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
	if err != nil {
		b.Fatal(err)
	}
	defer reg.Close()
	for i := range 1000 {
		if err := reg.Register(thingsIn(fmt.Sprintf("g%04d.many.example.org", i), "v1", "things")); err != nil {
			b.Fatal(err)
		}
	}
	tests := []struct{ name, path, accept string }{
		{"apis-aggregated-gzip", "/apis", aggregatedAccept},
		{"openapi-v3-index", "/openapi/v3", ""},
		{"openapi-v3-gv", "/openapi/v3/apis/g0000.many.example.org/v1", ""},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			req := httptest.NewRequest("GET", tt.path, nil)
			req.Header.Set("Accept-Encoding", "gzip")
			if tt.accept != "" {
				req.Header.Set("Accept", tt.accept)
			}
			for range b.N {
				reg.ServeHTTP(&discardWriter{h: http.Header{}}, req)
			}
		})
	}
}
