package registry

import (
	"net/http"
	"strings"

	"github.com/kapi-dev/kapi/codec"
)

// format is one wire format of API objects.
type format uint8

const (
	jsonFormat format = iota
	yamlFormat
	protobufFormat
	cborFormat
	numFormats
)

const (
	mediaJSON     = "application/json"
	mediaYAML     = "application/yaml"
	mediaProtobuf = "application/vnd.kubernetes.protobuf"
	mediaCBOR     = "application/cbor"
	mediaCBORSeq  = "application/cbor-seq"
)

var formatTypes = [numFormats]string{mediaJSON, mediaYAML, mediaProtobuf, mediaCBOR}

func (f format) String() string { return formatTypes[f] }

// view is the shape of a response: the objects themselves, a meta.k8s.io
// Table of them, or their PartialObjectMetadata.
type view uint8

const (
	objectView view = iota
	tableView
	partialView
)

// target is a negotiated response representation.
type target struct {
	format format
	view   view
	// metaVersion is the meta.k8s.io version of a Table or
	// PartialObjectMetadata ("v1" or "v1beta1").
	metaVersion string
}

// metaAPIVersion is the apiVersion of a Table or PartialObjectMetadata.
func (t target) metaAPIVersion() string { return "meta.k8s.io/" + t.metaVersion }

// endpoint is what a request reads: one object, a collection, or a watch
// stream. It decides which views are on offer: PartialObjectMetadataList
// only for collections, no YAML for watches (kube answers 406 there too).
type endpoint uint8

const (
	objectEndpoint endpoint = iota
	listEndpoint
	watchEndpoint
	numEndpoints
)

// offers is what a server can answer on one endpoint, in its order of
// preference, with the target each media type selects.
type offers struct {
	types   []codec.MediaType
	targets []target
}

// offerTable holds the offers per endpoint, for resources with and without
// a protobuf message. They are built once: negotiation allocates nothing
// for them.
var offerTable = func() (t [2][numEndpoints]offers) {
	for p := range 2 {
		for e := range numEndpoints {
			t[p][e] = buildOffers(p == 1, e)
		}
	}
	return t
}()

func buildOffers(hasProtobuf bool, e endpoint) offers {
	var o offers
	add := func(f format, t target, params map[string]string) {
		t.format = f
		o.types = append(o.types, codec.MediaType{Type: formatTypes[f], Params: params})
		o.targets = append(o.targets, t)
	}
	formats := func(withProtobuf bool) []format {
		fs := []format{jsonFormat}
		if e != watchEndpoint {
			fs = append(fs, yamlFormat)
		}
		if withProtobuf {
			fs = append(fs, protobufFormat)
		}
		return append(fs, cborFormat)
	}
	for _, f := range formats(hasProtobuf) {
		add(f, target{view: objectView}, nil)
	}
	partial := "PartialObjectMetadata"
	if e == listEndpoint {
		partial = "PartialObjectMetadataList"
	}
	for _, mv := range []string{"v1", "v1beta1"} {
		for _, f := range formats(false) { // Table has no protobuf form in kube
			add(f, target{view: tableView, metaVersion: mv}, map[string]string{"as": "Table", "g": "meta.k8s.io", "v": mv})
		}
		for _, f := range formats(true) {
			add(f, target{view: partialView, metaVersion: mv}, map[string]string{"as": partial, "g": "meta.k8s.io", "v": mv})
		}
	}
	return o
}

// statusOffers are the formats a Status (or any other value without a
// protobuf message of its own in a resource) can take.
var statusOffers = offers{
	types: []codec.MediaType{{Type: mediaJSON}, {Type: mediaYAML}, {Type: mediaProtobuf}, {Type: mediaCBOR}},
	targets: []target{
		{format: jsonFormat}, {format: yamlFormat}, {format: protobufFormat}, {format: cborFormat},
	},
}

// valueOffers are the formats of values that have no protobuf message in
// kapi (Scale, discovery documents): protobuf is not among them.
var valueOffers = offers{
	types:   []codec.MediaType{{Type: mediaJSON}, {Type: mediaYAML}, {Type: mediaCBOR}},
	targets: []target{{format: jsonFormat}, {format: yamlFormat}, {format: cborFormat}},
}

// supportedTypes is what a 406 lists: the plain media types on offer.
func (o offers) supportedTypes() string {
	var plain []codec.MediaType
	for _, t := range o.types {
		if t.Params == nil {
			plain = append(plain, t)
		}
	}
	return codec.Supported(plain)
}

// pick negotiates the request's Accept header against o; 406 when nothing
// on offer is acceptable.
func (o offers) pick(req *http.Request) (target, error) {
	accept, err := codec.ParseAccept(req.Header.Get("Accept"))
	if err != nil {
		return target{}, errNotAcceptable(o.supportedTypes())
	}
	m, ok := codec.Negotiate(accept, o.types)
	if !ok {
		return target{}, errNotAcceptable(o.supportedTypes())
	}
	for i, t := range o.types {
		if t.Type == m.Type && sameParams(t.Params, m.Params) {
			return o.targets[i], nil
		}
	}
	return target{}, errNotAcceptable(o.supportedTypes())
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

// negotiateFor picks the representation of a response about res.
func negotiateFor(req *http.Request, res *Resource, e endpoint) (target, error) {
	p := 0
	if res.Protobuf != nil {
		p = 1
	}
	return offerTable[p][e].pick(req)
}

// statusFormat is the format an error answers in: the client's choice
// among every format, JSON when it accepts none of them (a 406 about the
// Accept header itself is JSON, as in kube).
func statusFormat(req *http.Request) format {
	if req == nil {
		return jsonFormat
	}
	t, err := statusOffers.pick(req)
	if err != nil {
		return jsonFormat
	}
	return t.format
}

// pretty reports whether the client asked for indented text.
func pretty(req *http.Request) bool {
	p := req.URL.Query().Get("pretty")
	return p == "true" || p == "1"
}

// acceptsGzip reports whether Accept-Encoding lists gzip with a non-zero
// weight.
func acceptsGzip(req *http.Request) bool {
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
