package negotiate

import (
	"net/http/httptest"
	"testing"
)

func TestPick(t *testing.T) {
	tests := []struct {
		name     string
		protobuf bool
		e        Endpoint
		accept   string
		want     Target
		wantOK   bool
	}{
		{"no Accept is JSON", false, Item, "", Target{Format: JSON}, true},
		{"YAML", false, Item, "application/yaml", Target{Format: YAML}, true},
		{"no YAML for watches", false, Watch, "application/yaml", Target{}, false},
		{"protobuf with a message", true, Item, MediaProtobuf, Target{Format: Protobuf}, true},
		{"no protobuf without one", false, Item, MediaProtobuf, Target{}, false},
		{"Table", false, List, "application/json;as=Table;g=meta.k8s.io;v=v1", Target{Format: JSON, View: Table, MetaVersion: "v1"}, true},
		{"no protobuf Table", true, List, MediaProtobuf + ";as=Table;g=meta.k8s.io;v=v1", Target{}, false},
		{"partial list", true, List, MediaProtobuf + ";as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1", Target{Format: Protobuf, View: Partial, MetaVersion: "v1beta1"}, true},
		{"partial list is for collections", false, Item, "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", Target{}, false},
		{"fallback by weight", false, Item, "text/html, application/cbor;q=0.5", Target{Format: CBOR}, true},
	}
	for _, tt := range tests {
		req := httptest.NewRequest("GET", "/", nil)
		if tt.accept != "" {
			req.Header.Set("Accept", tt.accept)
		}
		got, ok := For(tt.protobuf, tt.e).Pick(req)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("%s: got %+v, %v; want %+v, %v", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestSupported(t *testing.T) {
	if got, want := For(false, Watch).Supported(), "application/json, application/cbor"; got != want {
		t.Errorf("got %q; want %q", got, want)
	}
}

func TestStatusFormat(t *testing.T) {
	for accept, want := range map[string]Format{"": JSON, MediaProtobuf: Protobuf, "text/html": JSON, "application/yaml": YAML} {
		req := httptest.NewRequest("GET", "/", nil)
		req.Header.Set("Accept", accept)
		if got := StatusFormat(req); got != want {
			t.Errorf("Accept %q: got %v; want %v", accept, got, want)
		}
	}
	if got := StatusFormat(nil); got != JSON {
		t.Errorf("no request: got %v; want JSON", got)
	}
}

func TestAcceptsGzip(t *testing.T) {
	for h, want := range map[string]bool{"": false, "gzip": true, "deflate, GZIP;q=0.5": true, "gzip;q=0": false, "gzip; q=0.000": false, "br": false} {
		req := httptest.NewRequest("GET", "/", nil)
		req.Header.Set("Accept-Encoding", h)
		if got := AcceptsGzip(req); got != want {
			t.Errorf("Accept-Encoding %q: got %v; want %v", h, got, want)
		}
	}
}
