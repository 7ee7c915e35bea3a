package registry

import (
	"net/http"
	"sort"

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

// group describes a group for discovery, its versions in order (the
// first is preferred).
func (r *Registry) group(name string) discovery.Group {
	r.mu.RLock()
	defer r.mu.RUnlock()
	g := discovery.Group{Name: name}
	for v, gv := range r.groups[name] {
		dv := discovery.Version{Version: v}
		for _, res := range gv.resources {
			dv.Resources = append(dv.Resources, res.discoveryEntry())
		}
		g.Versions = append(g.Versions, dv)
	}
	sort.Slice(g.Versions, func(i, j int) bool { return g.Versions[i].Version < g.Versions[j].Version })
	return g
}

// discoveryEntry is what discovery says of res.
func (res *Resource) discoveryEntry() discovery.Resource {
	return discovery.Resource{
		Group: res.Group, Version: res.Version, Kind: res.Kind, Plural: res.Plural, Singular: res.Singular,
		ShortNames: res.ShortNames, Categories: res.Categories, Namespaced: res.Namespaced,
		Subresources: res.subresourceNames(), Verbs: res.verbs(), SubresourceKinds: subresourceKinds(res.SubresourceKinds),
	}
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

func (r *Registry) groupNames() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []string
	for g := range r.groups {
		if g != "" {
			out = append(out, g)
		}
	}
	sort.Strings(out)
	return out
}

// serveRootDiscovery serves /api and /apis, aggregated when asked.
func (r *Registry) serveRootDiscovery(w http.ResponseWriter, req *http.Request, core bool) {
	accept, err := codec.ParseAccept(req.Header.Get("Accept"))
	if err != nil {
		writeStatus(w, req, errNotAcceptable(codec.Supported(rootOffers)))
		return
	}
	offer, ok := codec.Negotiate(accept, rootOffers)
	if !ok {
		writeStatus(w, req, errNotAcceptable(codec.Supported(rootOffers)))
		return
	}
	if offer.Params["as"] == "APIGroupDiscoveryList" {
		b := mustJSON(r.aggregated(core))
		w.Header().Set("Content-Type", aggregatedV2ContentType)
		w.Header().Set("Vary", "Accept")
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
	groups := []discovery.APIGroup{}
	for _, g := range r.groupNames() {
		groups = append(groups, discovery.NewAPIGroup(r.group(g)))
	}
	r.writeJSON(w, req, http.StatusOK, map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

// serveGroup serves /apis/GROUP.
func (r *Registry) serveGroup(w http.ResponseWriter, req *http.Request, group string) {
	r.mu.RLock()
	_, ok := r.groups[group]
	r.mu.RUnlock()
	if !ok || group == "" {
		writeStatus(w, req, errPathNotFound())
		return
	}
	g := discovery.NewAPIGroup(r.group(group))
	g.Kind, g.APIVersion = "APIGroup", "v1"
	r.writeJSON(w, req, http.StatusOK, g)
}

// serveResourceList serves /api/v1 and /apis/GROUP/VERSION.
func (r *Registry) serveResourceList(w http.ResponseWriter, req *http.Request, gv *groupVer) {
	v := discovery.Version{Version: gv.version}
	for _, res := range gv.resources {
		v.Resources = append(v.Resources, res.discoveryEntry())
	}
	r.writeJSON(w, req, http.StatusOK, discovery.ResourceList(gv.group, v))
}

func (res *Resource) subresourceNames() []string {
	var out []string
	if res.Status {
		out = append(out, "status")
	}
	if res.Scale != nil {
		out = append(out, "scale")
	}
	custom := make([]string, 0, len(res.Subresources))
	for name := range res.Subresources {
		custom = append(custom, name)
	}
	sort.Strings(custom)
	return append(out, custom...)
}

// aggregated is the apidiscovery.k8s.io/v2 document of the core group, or
// of the others.
func (r *Registry) aggregated(core bool) discovery.List {
	names := r.groupNames()
	if core {
		names = []string{""}
	}
	groups := make([]discovery.Group, 0, len(names))
	for _, g := range names {
		groups = append(groups, r.group(g))
	}
	return discovery.Aggregated(groups)
}
