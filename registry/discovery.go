package registry

import (
	"net/http"
	"sort"
	"strconv"

	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/registry/internal/discovery"
	"github.com/kapi-dev/kapi/registry/internal/negotiate"
)

// Discovery documents (URI-4): the legacy per-path documents and the
// aggregated apidiscovery.k8s.io/v2 list that clients ask for first.

var (
	aggregatedV2 = codec.MediaType{Type: negotiate.MediaJSON, Params: map[string]string{"g": "apidiscovery.k8s.io", "v": "v2", "as": "APIGroupDiscoveryList"}}
	rootOffers   = []codec.MediaType{aggregatedV2, {Type: negotiate.MediaJSON}}
)

const aggregatedV2ContentType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// discoveryEntry is what discovery says of res.
func (res *Resource) discoveryEntry() discovery.Resource {
	return discovery.Resource{
		Group: res.Group, Version: res.Version, Kind: res.Kind, Plural: res.Plural, Singular: res.Singular,
		ShortNames: res.ShortNames, Categories: res.Categories, Namespaced: res.Namespaced,
		Subresources: res.subresourceNames(), Verbs: res.verbs(), SubresourceKinds: subresourceKinds(res.SubresourceKinds),
		StorageVersion: res.storedAt(),
	}
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

// serveRootDiscovery serves /api and /apis, aggregated when asked.
func (r *Registry) serveRootDiscovery(w http.ResponseWriter, req *http.Request, core bool) {
	accept, err := codec.ParseAccept(req.Header.Get("Accept"))
	if err != nil {
		writeStatus(w, req, errOffersNotAcceptable(codec.Supported(rootOffers)))
		return
	}
	offer, ok := codec.Negotiate(accept, rootOffers)
	if !ok {
		writeStatus(w, req, errOffersNotAcceptable(codec.Supported(rootOffers)))
		return
	}
	t := r.tab.Load()
	if offer.Params["as"] == "APIGroupDiscoveryList" {
		aggCore, aggAPIs := t.aggregated()
		d := aggAPIs
		if core {
			d = aggCore
		}
		serveAggregated(w, req, d)
		return
	}
	w.Header().Set("Vary", "Accept")
	if core {
		r.writeJSON(w, req, http.StatusOK, map[string]any{
			"kind": "APIVersions", "versions": []string{"v1"},
			"serverAddressByClientCIDRs": []map[string]string{{"clientCIDR": "0.0.0.0/0", "serverAddress": req.Host}},
		})
		return
	}
	t.documents().apiGroupList.serve(w, req)
}

// serveAggregated serves an aggregated discovery document as kube's
// aggregated discovery handler does: with its ETag (a matching
// If-None-Match answers 304), Cache-Control: public, and compressed when
// large and the client accepts gzip (compressed once per document).
//
// Worked example: with 1,000 CRDs /apis is ~350 KiB of JSON; client-go
// asks with Accept-Encoding: gzip and gets the cached gzip form (a few
// KiB), Etag "3A7F…"; asked again with If-None-Match: "3A7F…" before the
// table changes, it gets 304 and no body.
func serveAggregated(w http.ResponseWriter, req *http.Request, d *doc) {
	h := w.Header()
	h.Set("Etag", d.etag)
	h.Set("Vary", "Accept")
	h.Set("Cache-Control", "public")
	if req.Header.Get("If-None-Match") == d.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", aggregatedV2ContentType)
	if len(d.raw) > gzipThreshold && negotiate.AcceptsGzip(req) {
		d.serveGzip(w)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(d.raw)))
	w.WriteHeader(http.StatusOK)
	w.Write(d.raw)
}

// serveGroup serves /apis/GROUP.
func (r *Registry) serveGroup(w http.ResponseWriter, req *http.Request, group string) {
	b, ok := r.tab.Load().documents().groupDocs[group]
	if !ok {
		writeStatus(w, req, errPathNotFound())
		return
	}
	writeBody(w, req, http.StatusOK, negotiate.JSON, b)
}

// serveResourceList serves /api/v1 and /apis/GROUP/VERSION.
func (r *Registry) serveResourceList(w http.ResponseWriter, req *http.Request, gv *groupVer) {
	writeBody(w, req, http.StatusOK, negotiate.JSON, gv.built().list)
}

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
	return append(out, custom...)
}
