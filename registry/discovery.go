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
	docs := r.tab.Load().documents(r.opts.Version.GitVersion)
	if offer.Params["as"] == "APIGroupDiscoveryList" {
		b := docs.aggregatedAPIs
		if core {
			b = docs.aggregatedCore
		}
		w.Header().Set("Content-Type", aggregatedV2ContentType)
		w.Header().Set("Vary", "Accept")
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.WriteHeader(http.StatusOK)
		w.Write(b)
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
	docs.apiGroupList.serve(w, req)
}

// serveGroup serves /apis/GROUP.
func (r *Registry) serveGroup(w http.ResponseWriter, req *http.Request, group string) {
	b, ok := r.tab.Load().documents(r.opts.Version.GitVersion).groupDocs[group]
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
	custom := make([]string, 0, len(res.Subresources)+len(res.UpdateSubresources))
	for name := range res.Subresources {
		custom = append(custom, name)
	}
	custom = append(custom, res.UpdateSubresources...)
	sort.Strings(custom)
	return append(out, custom...)
}
