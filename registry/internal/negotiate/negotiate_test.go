package negotiate

import (
	"net/http/httptest"
	"strings"
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
		{"YAML for watches is negotiated (the caller answers 406)", false, Watch, "application/yaml", Target{Format: YAML}, true},
		{"protobuf with a message", true, Item, MediaProtobuf, Target{Format: Protobuf}, true},
		{"no protobuf without one", false, Item, MediaProtobuf, Target{}, false},
		{"Table", false, List, "application/json;as=Table;g=meta.k8s.io;v=v1", Target{Format: JSON, View: Table, MetaVersion: "v1"}, true},
		{"no protobuf Table", true, List, MediaProtobuf + ";as=Table;g=meta.k8s.io;v=v1", Target{}, false},
		{"partial list", true, List, MediaProtobuf + ";as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1", Target{Format: Protobuf, View: Partial, MetaVersion: "v1beta1"}, true},
		{"partial list of an object", false, Item, "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", Target{Format: JSON, View: WrongPartial, MetaVersion: "v1"}, true},
		{"partial object of a list", false, List, "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", Target{Format: JSON, View: WrongPartial, MetaVersion: "v1"}, true},
		{"partial objects of a watch", false, Watch, "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", Target{Format: JSON, View: Partial, MetaVersion: "v1"}, true},
		{"no partial list of a watch", false, Watch, "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", Target{}, false},
		{"no CBOR Table", false, List, "application/cbor;as=Table;g=meta.k8s.io;v=v1", Target{}, false},
		{"YAML Table", false, List, "application/yaml;as=Table;g=meta.k8s.io;v=v1beta1", Target{Format: YAML, View: Table, MetaVersion: "v1beta1"}, true},
		{"fallback by weight", false, Item, "text/html, application/cbor;q=0.5", Target{Format: CBOR}, true},
	}
	for _, tt := range tests {
		req := httptest.NewRequest("GET", "/", nil)
		if tt.accept != "" {
			req.Header.Set("Accept", tt.accept)
		}
		for _, round := range []string{"first", "remembered"} { // the second Pick answers from the memo
			got, ok := For(tt.protobuf, tt.e).Pick(req)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("%s (%s): got %+v, %v; want %+v, %v", tt.name, round, got, ok, tt.want, tt.wantOK)
			}
		}
	}
}

// Pick remembers the first maxPicks Accept headers of an Offers and
// negotiates the others afresh, with the same answers.
func TestPickMemoBounded(t *testing.T) {
	o := buildOffers(true, Item)
	for i := range 3 * maxPicks {
		accept := MediaProtobuf + ";q=0." + strings.Repeat("9", i%5+1) + ", application/json;x=" + strings.Repeat("a", i+1)
		if i%2 == 1 {
			accept = "text/html;x=" + strings.Repeat("b", i+1)
		}
		req := httptest.NewRequest("GET", "/", nil)
		req.Header.Set("Accept", accept)
		want, wantOK := o.pick(accept)
		for range 2 {
			if got, ok := o.Pick(req); got != want || ok != wantOK {
				t.Fatalf("%q: got %+v, %v; want %+v, %v", accept, got, ok, want, wantOK)
			}
		}
		if wantOK != (i%2 == 0) {
			t.Fatalf("%q: negotiated %v", accept, wantOK)
		}
	}
	if n := len(o.picks.m); n != maxPicks {
		t.Errorf("the memo holds %d headers; want %d", n, maxPicks)
	}
}

func TestSupported(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"watch", For(false, Watch).Supported(), "application/json, application/yaml, application/cbor"},
		{"item with protobuf", For(true, Item).Supported(), "application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor"},
		{"stream", StreamSupported, "application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch, application/cbor-seq"},
		{"item route", strings.Join(Produces(Item), ", "), "application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor"},
		{"list route", strings.Join(Produces(List), ", "), "application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor, application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch, application/cbor-seq"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q; want %q", tt.name, tt.got, tt.want)
		}
	}
}

// go-restful's route matching, which kube runs before negotiating.
func TestRouteAccepts(t *testing.T) {
	produces := Produces(Item)
	tests := []struct {
		accept string
		want   bool
	}{
		{"", true},
		{"*/*", true},
		{"application/json", true},
		{"application/json;as=Nope;v=v1;g=meta.k8s.io", true}, // parameters aside: kube's negotiation answers
		{"text/html", false},
		{"text/html, application/yaml;q=0.1", true},
		{"Application/JSON", false}, // go-restful compares exactly
		{"application/*", false},    // only */* is a wildcard to it
		{"text/html,  */* ", true},
		{"application/json;stream=watch", true},
		{"application/cbor-seq", false},
	}
	for _, tt := range tests {
		if got := RouteAccepts(tt.accept, produces); got != tt.want {
			t.Errorf("Accept %q: got %v; want %v", tt.accept, got, tt.want)
		}
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

// Aggregated decides as kube's discovery wrapper: any range naming
// apidiscovery.k8s.io/v2 APIGroupDiscoveryList, wherever it is in the
// header, in its type's format; other parameters play no part.
func TestAggregated(t *testing.T) {
	tests := []struct {
		accept string
		want   Format
		wantOK bool
	}{
		{"", 0, false},
		{"*/*", 0, false},
		{"application/json", 0, false},
		{"application/json" + AggregatedParams, JSON, true},
		{"application/json, application/json" + AggregatedParams, JSON, true},
		{MediaProtobuf + AggregatedParams + ", application/json", Protobuf, true},
		{"application/yaml" + AggregatedParams, YAML, true},
		{"application/cbor" + AggregatedParams, CBOR, true},
		{"*/*" + AggregatedParams, JSON, true},
		{"application/json" + AggregatedParams + ";profile=nopeer", JSON, true},
		{"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList", 0, false},
		{"application/json;as=APIGroupDiscoveryList", 0, false},
		{"application/json" + AggregatedParams + ";q=0", 0, false},
		{"text/html" + AggregatedParams, 0, false},
		{"application/json;q=0.5" + AggregatedParams + ", " + MediaProtobuf + AggregatedParams, Protobuf, true},
		{"not a media type;;", 0, false},
	}
	for _, tt := range tests {
		req := httptest.NewRequest("GET", "/apis", nil)
		req.Header.Set("Accept", tt.accept)
		if got, ok := Aggregated(req); got != tt.want || ok != tt.wantOK {
			t.Errorf("%q: got %v, %v; want %v, %v", tt.accept, got, ok, tt.want, tt.wantOK)
		}
	}
}

// FuzzAggregated: any Accept header is decided without a panic, and an
// aggregated answer is in one of the formats.
func FuzzAggregated(f *testing.F) {
	for _, s := range []string{"", "*/*", "application/json" + AggregatedParams, "application/json;g=\"a,b\";v=v2", MediaProtobuf + AggregatedParams + ";q=0.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		req := httptest.NewRequest("GET", "/apis", nil)
		req.Header.Set("Accept", accept)
		if got, ok := Aggregated(req); ok && got >= NumFormats {
			t.Fatalf("%q: format %d", accept, got)
		}
		DiscoveryOffers.Pick(req)
		CustomDiscoveryOffers.Pick(req)
	})
}
