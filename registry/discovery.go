package registry

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/codec/cbor"
	"github.com/kapi-dev/kapi/codec/protobuf"
	"github.com/kapi-dev/kapi/registry/internal/discovery"
	"github.com/kapi-dev/kapi/registry/internal/negotiate"
)

// Discovery documents (URI-4): the legacy per-path documents and the
// aggregated apidiscovery.k8s.io/v2 list that clients ask for first.

// discoveryEntry is what discovery says of res.
func (res *Resource) discoveryEntry() discovery.Resource {
	return discovery.Resource{
		Group: res.Group, Version: res.Version, Kind: res.Kind, Plural: res.Plural, Singular: res.Singular,
		ShortNames: res.ShortNames, Categories: res.Categories, Namespaced: res.Namespaced,
		Subresources: res.subresourceNames(), Verbs: res.verbs(), SubresourceKinds: subresourceKinds(res.SubresourceKinds),
		StorageVersionHash: res.storageVersionHash(), Custom: res.Custom,
	}
}

// storageVersionHash is kube's storageVersionHash of the group, version
// and kind res's objects are stored as (StorageGroup's for a cohabiting
// resource), or res.StorageVersionHash; none for a review.
func (res *Resource) storageVersionHash() string {
	v := res.storedAt()
	switch {
	case res.StorageVersionHash != "":
		return res.StorageVersionHash
	case v == "":
		return ""
	}
	g := res.Group
	switch {
	case res.StorageGroup == "core" && res.StorageVersion != "":
		g = ""
	case res.StorageGroup != "" && res.StorageVersion != "":
		g = res.StorageGroup
	}
	return discovery.StorageVersionHash(g, v, res.Kind)
}

// storedAt is the version res's objects are stored at; empty for a review,
// which stores nothing.
func (res *Resource) storedAt() string {
	switch {
	case res.Review != nil:
		return ""
	case res.StorageVersion != "":
		return res.StorageVersion
	}
	return res.Version
}

func subresourceKinds(m map[string]SubresourceKind) map[string]discovery.Subresource {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]discovery.Subresource, len(m))
	for name, k := range m {
		out[name] = discovery.Subresource(k)
	}
	return out
}

// serveRootDiscovery serves /api and /apis: the aggregated list when the
// client asks for it (negotiate.Aggregated), else the legacy document, in
// the format it prefers. /api is a go-restful route in kube (its 406 for
// an Accept header no route produces); /apis is not.
func (r *Registry) serveRootDiscovery(w http.ResponseWriter, req *http.Request, core bool) {
	if core && !negotiate.RouteAccepts(req.Header.Get("Accept"), negotiate.Produces(negotiate.Item)) {
		writeStatus(w, req, errRouteNotAcceptable(negotiate.Produces(negotiate.Item)))
		return
	}
	tab := r.tab.Load()
	if f, ok := negotiate.Aggregated(req); ok {
		aggCore, aggAPIs := tab.aggregated()
		d := aggAPIs
		if core {
			d = aggCore
		}
		serveAggregated(w, req, f, d)
		return
	}
	offers := negotiate.DiscoveryOffers
	t, ok := offers.Pick(req)
	if !ok {
		writeNotAcceptable(w, req, offers)
		return
	}
	w.Header().Set("Vary", "Accept")
	if !core {
		tab.documents().apiGroupList.serveIn(w, req, t.Format)
		return
	}
	b, err := json.Marshal(map[string]any{
		"kind": "APIVersions", "versions": []string{"v1"},
		"serverAddressByClientCIDRs": []map[string]string{{"clientCIDR": "0.0.0.0/0", "serverAddress": req.Host}},
	})
	if err != nil {
		r.writeError(w, req, errInternal(err))
		return
	}
	writeDiscovery(w, req, t.Format, b)
}

// serveAggregated serves an aggregated discovery document in format f as
// kube's aggregated discovery handler does: with its ETag (a matching
// If-None-Match answers 304; one ETag for every format, as kube's),
// Cache-Control: public, and compressed when large and the client
// accepts gzip (each form encoded and compressed once per document).
//
// Worked example: with 1,000 CRDs /apis is ~350 KiB of JSON; client-go
// asks with Accept-Encoding: gzip and gets the cached gzip form (a few
// KiB), Etag "3A7F…"; asked again with If-None-Match: "3A7F…" before the
// table changes, it gets 304 and no body.
func serveAggregated(w http.ResponseWriter, req *http.Request, f negotiate.Format, d *doc) {
	h := w.Header()
	h.Set("Etag", d.etag)
	h.Set("Vary", "Accept")
	h.Set("Cache-Control", "public")
	if req.Header.Get("If-None-Match") == d.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	d, err := d.in(f)
	if err != nil {
		h.Del("Etag")
		writeStatus(w, req, errInternal(err))
		return
	}
	h.Set("Content-Type", negotiate.Types[f]+negotiate.AggregatedParams)
	if len(d.raw) > gzipThreshold && negotiate.AcceptsGzip(req) {
		d.serveGzip(w)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(d.raw)))
	w.WriteHeader(http.StatusOK)
	w.Write(d.raw)
}

// serveGroup serves /apis/GROUP (not a go-restful route in kube).
func (r *Registry) serveGroup(w http.ResponseWriter, req *http.Request, group string) {
	b, ok := r.tab.Load().documents().groupDocs[group]
	if !ok {
		writeStatus(w, req, errPathNotFound())
		return
	}
	offers := negotiate.DiscoveryOffers
	t, ok := offers.Pick(req)
	if !ok {
		writeNotAcceptable(w, req, offers)
		return
	}
	writeDiscovery(w, req, t.Format, b)
}

// serveResourceList serves /api/v1 and /apis/GROUP/VERSION: a built-in
// group version's from a go-restful route in kube, a custom resource's
// from apiextensions-apiserver's handler, which has no CBOR.
func (r *Registry) serveResourceList(w http.ResponseWriter, req *http.Request, gv *groupVer) {
	offers := negotiate.DiscoveryOffers
	if slices.ContainsFunc(gv.resources, func(res *Resource) bool { return res.Custom }) {
		offers = negotiate.CustomDiscoveryOffers
	} else if !negotiate.RouteAccepts(req.Header.Get("Accept"), negotiate.Produces(negotiate.Item)) {
		writeStatus(w, req, errRouteNotAcceptable(negotiate.Produces(negotiate.Item)))
		return
	}
	t, ok := offers.Pick(req)
	if !ok {
		writeNotAcceptable(w, req, offers)
		return
	}
	writeDiscovery(w, req, t.Format, gv.built().list)
}

// writeNotAcceptable is kube's 406 for a discovery document in no format
// the client accepts: in JSON, as kube writes it (it negotiates the
// Status among the same offers, and falls back to JSON).
func writeNotAcceptable(w http.ResponseWriter, req *http.Request, offers negotiate.Offers) {
	writeStatusIn(w, req, negotiate.JSON, errNotAcceptable(offers.Supported()))
}

// writeDiscovery answers with the discovery document b (JSON) in format f.
func writeDiscovery(w http.ResponseWriter, req *http.Request, f negotiate.Format, b []byte) {
	b, err := discoveryIn(f, b)
	if err != nil {
		writeStatus(w, req, errInternal(err))
		return
	}
	writeBody(w, req, http.StatusOK, f, b)
}

// discoveryMessages are the protobuf messages of the discovery documents,
// by kind.
var discoveryMessages = map[string]protoreflect.MessageDescriptor{
	"APIVersions":           protobuf.APIVersions,
	"APIGroupList":          protobuf.APIGroupList,
	"APIGroup":              protobuf.APIGroup,
	"APIResourceList":       protobuf.APIResourceList,
	"APIGroupDiscoveryList": protobuf.APIGroupDiscoveryList,
}

// discoveryIn is the discovery document b (JSON) in format f, a protobuf
// one in kube's envelope named by its kind and apiVersion (APIVersions
// has none, as in kube's JSON).
func discoveryIn(f negotiate.Format, b []byte) ([]byte, error) {
	switch f {
	case negotiate.JSON:
		return b, nil
	case negotiate.YAML:
		return codec.JSONToYAML(b)
	}
	m, err := decodeObject(b)
	if err != nil {
		return nil, err
	}
	var tm protobuf.TypeMeta
	tm.APIVersion, _ = m["apiVersion"].(string)
	tm.Kind, _ = m["kind"].(string)
	var item []byte
	switch md := discoveryMessages[tm.Kind]; {
	case f == negotiate.CBOR:
		item, err = cbor.AppendValue(nil, map[string]any(m))
	case f == negotiate.Protobuf && md != nil:
		item, err = protobuf.Marshal(md, m)
	default:
		err = fmt.Errorf("a %s has no %s form", tm.Kind, f)
	}
	if err != nil {
		return nil, err
	}
	return wrap(negotiate.Target{Format: f}, tm, item), nil
}

// subresourceNames are res's subresources in discovery's order: a built-in
// kind's in name order, as kube's installer sorts its paths
// (deployments/scale before deployments/status); a custom resource's status
// then scale, as apiextensions-apiserver lists them, then the rest in
// name order.
func (res *Resource) subresourceNames() []string {
	var out []string
	if res.Status {
		out = append(out, "status")
	}
	if res.Scale != nil {
		out = append(out, "scale")
	}
	custom := make([]string, 0, len(res.Subresources)+len(res.UpdateSubresources)+len(res.StatusSubresources))
	for name := range res.Subresources {
		custom = append(custom, name)
	}
	custom = append(custom, res.UpdateSubresources...)
	if res.Status {
		custom = append(custom, res.StatusSubresources...)
	}
	sort.Strings(custom)
	out = append(out, custom...)
	if !res.Custom {
		sort.Strings(out)
	}
	return out
}
