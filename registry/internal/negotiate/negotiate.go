package negotiate

import (
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/kapi-dev/kapi/codec"
)

// Format is one wire format of API objects.
type Format uint8

// The formats, in the order of Types.
const (
	JSON Format = iota
	YAML
	Protobuf
	CBOR
	NumFormats // the number of formats
)

// The media types of the formats, and of CBOR's watch streams.
const (
	MediaJSON     = "application/json"
	MediaYAML     = "application/yaml"
	MediaProtobuf = "application/vnd.kubernetes.protobuf"
	MediaCBOR     = "application/cbor"
	MediaCBORSeq  = "application/cbor-seq"
)

// Types are the formats' media types, by Format.
var Types = [NumFormats]string{MediaJSON, MediaYAML, MediaProtobuf, MediaCBOR}

// String is the format's media type.
func (f Format) String() string { return Types[f] }

// View is the shape of a response: the objects themselves, a meta.k8s.io
// Table of them, or their PartialObjectMetadata.
type View uint8

// The views.
const (
	Object View = iota
	Table
	Partial
	// WrongPartial is PartialObjectMetadataList asked of one object, or
	// PartialObjectMetadata of a collection: kube negotiates it, serves
	// the request, and then fails to turn the answer into it (406 naming
	// the answer's Go type).
	WrongPartial
)

// Target is a negotiated response representation.
type Target struct {
	Format Format
	View   View
	// MetaVersion is the meta.k8s.io version of a Table or
	// PartialObjectMetadata ("v1" or "v1beta1").
	MetaVersion string
}

// MetaAPIVersion is the apiVersion of a Table or PartialObjectMetadata.
func (t Target) MetaAPIVersion() string { return "meta.k8s.io/" + t.MetaVersion }

// Endpoint is what a request reads: one object, a collection, or a watch
// stream. It decides which views are on offer: PartialObjectMetadataList
// for collections and PartialObjectMetadata for objects (the other one is
// WrongPartial). A watch negotiates as kube's does, among the formats of
// objects, YAML included: the caller answers 406 to YAML
// (StreamSupported), which has no stream form.
type Endpoint uint8

// The endpoints.
const (
	Item Endpoint = iota
	List
	Watch
	numEndpoints
)

// Offers is what a server can answer on one endpoint, in its order of
// preference, with the target each media type selects.
type Offers struct {
	types   []codec.MediaType
	targets []Target
	// picks remembers Pick's answer per Accept header (nil: none).
	picks *picks
}

// picks is an Offers' memo of Pick's answers: clients send one Accept
// header on every request (client-go's typed clients
// "application/vnd.kubernetes.protobuf, */*"), which is parsed and
// negotiated once. It keeps the first maxPicks headers, so a client
// sending ever new ones costs a parse each, not memory.
type picks struct {
	mu sync.RWMutex
	m  map[string]pick
}

type pick struct {
	t  Target
	ok bool
}

// maxPicks bounds the Accept headers an Offers remembers.
const maxPicks = 64

func newPicks() *picks { return &picks{m: map[string]pick{}} }

// offerTable holds the offers per endpoint, for resources with and without
// a protobuf message. They are built once: negotiation allocates nothing
// for them.
var offerTable = func() (t [2][numEndpoints]Offers) {
	for p := range 2 {
		for e := range numEndpoints {
			t[p][e] = buildOffers(p == 1, Endpoint(e))
		}
	}
	return t
}()

func buildOffers(hasProtobuf bool, e Endpoint) Offers {
	var o Offers
	add := func(f Format, t Target, params map[string]string) {
		t.Format = f
		o.types = append(o.types, codec.MediaType{Type: Types[f], Params: params})
		o.targets = append(o.targets, t)
	}
	o.picks = newPicks()
	formats := func(withProtobuf bool) []Format {
		fs := []Format{JSON, YAML}
		if withProtobuf {
			fs = append(fs, Protobuf)
		}
		return append(fs, CBOR)
	}
	for _, f := range formats(hasProtobuf) {
		add(f, Target{View: Object}, nil)
	}
	partial, wrong := "PartialObjectMetadata", "PartialObjectMetadataList"
	if e == List {
		partial, wrong = wrong, partial
	}
	for _, mv := range []string{"v1", "v1beta1"} {
		// A Table is JSON or YAML alone (kube's RequestScope
		// AllowsMediaTypeTransform).
		for _, f := range []Format{JSON, YAML} {
			add(f, Target{View: Table, MetaVersion: mv}, map[string]string{"as": "Table", "g": "meta.k8s.io", "v": mv})
		}
		for _, f := range formats(true) {
			add(f, Target{View: Partial, MetaVersion: mv}, map[string]string{"as": partial, "g": "meta.k8s.io", "v": mv})
		}
		if e == Watch {
			continue // a watch's events are objects; kube fails each one
		}
		for _, f := range formats(true) {
			add(f, Target{View: WrongPartial, MetaVersion: mv}, map[string]string{"as": wrong, "g": "meta.k8s.io", "v": mv})
		}
	}
	return o
}

// StreamSupported is what kube's 406 lists for a watch asked in a format
// with no stream form (YAML): its watch media types. Protobuf is among
// them for every resource: PartialObjectMetadata has a protobuf form.
const StreamSupported = MediaJSON + ";stream=watch, " + MediaProtobuf + ";stream=watch, " + MediaCBORSeq

// Produces is what kube's go-restful route of a built-in kind's endpoint
// produces: the object media types, and for a collection (which serves
// watches too) the stream ones after them. Protobuf is among them for
// every resource, as StreamSupported says.
func Produces(e Endpoint) []string {
	if e == Item {
		return itemProduces
	}
	return listProduces
}

var (
	itemProduces = []string{MediaJSON, MediaYAML, MediaProtobuf, MediaCBOR}
	listProduces = append(slices.Clone(itemProduces), MediaJSON+";stream=watch", MediaProtobuf+";stream=watch", MediaCBORSeq)
)

// RouteAccepts reports whether go-restful, which routes kube's requests
// for built-in kinds, finds the Accept header acceptable to a route
// producing produces, before kube negotiates: some element, its
// parameters cut off and spaces trimmed, is */* or one of produces
// exactly (case and all). Empty is */*. Otherwise kube answers go-restful's
// 406 ("406: Not Acceptable", listing produces).
func RouteAccepts(accept string, produces []string) bool {
	if accept == "" {
		return true
	}
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, _ := strings.Cut(part, ";")
		mt = strings.Trim(mt, " ")
		if mt == "*/*" || slices.Contains(produces, mt) {
			return true
		}
	}
	return false
}

// For is what a resource's endpoint offers; protobuf says whether the
// resource has a protobuf message. The offers are built once: negotiation
// allocates nothing for them.
func For(protobuf bool, e Endpoint) Offers {
	p := 0
	if protobuf {
		p = 1
	}
	return offerTable[p][e]
}

// StatusOffers are the formats a Status (or any other value without a
// protobuf message of its own in a resource) can take.
var StatusOffers = Offers{
	types: []codec.MediaType{{Type: MediaJSON}, {Type: MediaYAML}, {Type: MediaProtobuf}, {Type: MediaCBOR}},
	targets: []Target{
		{Format: JSON}, {Format: YAML}, {Format: Protobuf}, {Format: CBOR},
	},
	picks: newPicks(),
}

// Discovery offers: what kube offers for its legacy discovery documents,
// in its words when nothing is acceptable (406 listing them):
// DiscoveryOffers for /api, /apis, /apis/G and a built-in group version's
// APIResourceList; CustomDiscoveryOffers, without CBOR, for a custom
// resource's group version (apiextensions-apiserver's handler). /api and
// /apis answer the aggregated list instead when asked for it (Aggregated).
var (
	DiscoveryOffers       = discoveryOffers(JSON, YAML, Protobuf, CBOR)
	CustomDiscoveryOffers = discoveryOffers(JSON, YAML, Protobuf)
)

func discoveryOffers(formats ...Format) Offers {
	o := Offers{picks: newPicks()}
	for _, f := range formats {
		o.types = append(o.types, codec.MediaType{Type: Types[f]})
		o.targets = append(o.targets, Target{Format: f})
	}
	return o
}

// AggregatedParams are the media type parameters that ask /api and /apis
// for the aggregated discovery list (apidiscovery.k8s.io/v2
// APIGroupDiscoveryList), as they are in its answer's Content-Type.
const AggregatedParams = ";g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// Aggregated reports whether the request asks for the aggregated
// discovery list, and in which format, as kube's discovery wrapper
// decides before any other negotiation: the first range, in preference
// order, that carries g=apidiscovery.k8s.io, v=v2 and
// as=APIGroupDiscoveryList and whose type (wildcards included) is a
// format's. Its other parameters play no part (client-go's
// profile=nopeer, which a single server answers alike). So
// "application/json, application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
// asks for the list in JSON, and */* for the legacy document.
func Aggregated(req *http.Request) (Format, bool) {
	accept, err := codec.ParseAccept(req.Header.Get("Accept"))
	if err != nil {
		return 0, false
	}
	for _, rng := range accept {
		p := rng.Params
		if rng.Q <= 0 || p["g"] != "apidiscovery.k8s.io" || p["v"] != "v2" || p["as"] != "APIGroupDiscoveryList" {
			continue
		}
		for f, t := range Types {
			if codec.Match(codec.MediaType{Type: rng.Type}, codec.MediaType{Type: t}) {
				return Format(f), true
			}
		}
	}
	return 0, false
}

// ValueOffers are the formats of values that have no protobuf message in
// kapi (Scale): protobuf is not among them.
var ValueOffers = Offers{
	types:   []codec.MediaType{{Type: MediaJSON}, {Type: MediaYAML}, {Type: MediaCBOR}},
	targets: []Target{{Format: JSON}, {Format: YAML}, {Format: CBOR}},
	picks:   newPicks(),
}

// Supported is what a 406 lists: the plain media types on offer.
func (o Offers) Supported() string {
	var plain []codec.MediaType
	for _, t := range o.types {
		if t.Params == nil {
			plain = append(plain, t)
		}
	}
	return codec.Supported(plain)
}

// Pick negotiates the request's Accept header against o; false when
// nothing on offer is acceptable (406, listing Supported).
func (o Offers) Pick(req *http.Request) (Target, bool) {
	h := req.Header.Get("Accept")
	c := o.picks
	if c == nil {
		return o.pick(h)
	}
	c.mu.RLock()
	p, ok := c.m[h]
	c.mu.RUnlock()
	if ok {
		return p.t, p.ok
	}
	t, found := o.pick(h)
	c.mu.Lock()
	if len(c.m) < maxPicks {
		c.m[h] = pick{t, found}
	}
	c.mu.Unlock()
	return t, found
}

// pick is Pick of the Accept header h, computed.
func (o Offers) pick(h string) (Target, bool) {
	accept, err := codec.ParseAccept(h)
	if err != nil {
		return Target{}, false
	}
	m, ok := codec.Negotiate(accept, o.types)
	if !ok {
		return Target{}, false
	}
	for i, t := range o.types {
		if t.Type == m.Type && sameParams(t.Params, m.Params) {
			return o.targets[i], true
		}
	}
	return Target{}, false
}

func sameParams(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// StatusFormat is the format an error answers in: the client's choice
// among every format, JSON when it accepts none of them (a 406 about the
// Accept header itself is JSON, as in kube).
func StatusFormat(req *http.Request) Format {
	if req == nil {
		return JSON
	}
	t, ok := StatusOffers.Pick(req)
	if !ok {
		return JSON
	}
	return t.Format
}

// Pretty reports whether the client asked for indented text.
func Pretty(req *http.Request) bool {
	p := req.URL.Query().Get("pretty")
	return p == "true" || p == "1"
}

// AcceptsGzip reports whether Accept-Encoding lists gzip with a non-zero
// weight.
func AcceptsGzip(req *http.Request) bool {
	for _, v := range req.Header.Values("Accept-Encoding") {
		for part := range strings.SplitSeq(v, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
				continue
			}
			q := strings.ReplaceAll(params, " ", "")
			if q == "q=0" || q == "q=0.0" || q == "q=0.00" || q == "q=0.000" {
				continue
			}
			return true
		}
	}
	return false
}
