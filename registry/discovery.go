package registry

import (
	"net/http"
	"sort"

	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/registry/internal/negotiate"
)

// Discovery documents (URI-4): the legacy per-path documents and the
// aggregated apidiscovery.k8s.io/v2 list that clients ask for first.

var (
	aggregatedV2 = codec.MediaType{Type: negotiate.MediaJSON, Params: map[string]string{"g": "apidiscovery.k8s.io", "v": "v2", "as": "APIGroupDiscoveryList"}}
	rootOffers   = []codec.MediaType{aggregatedV2, {Type: negotiate.MediaJSON}}
)

const aggregatedV2ContentType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

type groupVersionForDiscovery struct {
	GroupVersion string `json:"groupVersion"`
	Version      string `json:"version"`
}

type apiGroup struct {
	Kind             string                     `json:"kind,omitempty"`
	APIVersion       string                     `json:"apiVersion,omitempty"`
	Name             string                     `json:"name"`
	Versions         []groupVersionForDiscovery `json:"versions"`
	PreferredVersion groupVersionForDiscovery   `json:"preferredVersion"`
}

type apiResource struct {
	Name         string   `json:"name"`
	SingularName string   `json:"singularName"`
	Namespaced   bool     `json:"namespaced"`
	Group        string   `json:"group,omitempty"`
	Version      string   `json:"version,omitempty"`
	Kind         string   `json:"kind"`
	Verbs        []string `json:"verbs"`
	ShortNames   []string `json:"shortNames,omitempty"`
	Categories   []string `json:"categories,omitempty"`
}

var (
	objectVerbs      = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	subresourceVerbs = []string{"get", "patch", "update"}
)

// versions returns the group's versions, newest-registered order kept
// stable by sorting; the first is preferred.
func (r *Registry) versions(group string) []groupVersionForDiscovery {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []groupVersionForDiscovery
	for v := range r.groups[group] {
		gv := v
		if group != "" {
			gv = group + "/" + v
		}
		out = append(out, groupVersionForDiscovery{GroupVersion: gv, Version: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
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

func (r *Registry) apiGroup(name string) apiGroup {
	vs := r.versions(name)
	return apiGroup{Name: name, Versions: vs, PreferredVersion: vs[0]}
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
	groups := []apiGroup{}
	for _, g := range r.groupNames() {
		groups = append(groups, r.apiGroup(g))
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
	g := r.apiGroup(group)
	g.Kind, g.APIVersion = "APIGroup", "v1"
	r.writeJSON(w, req, http.StatusOK, g)
}

// serveResourceList serves /api/v1 and /apis/GROUP/VERSION.
func (r *Registry) serveResourceList(w http.ResponseWriter, req *http.Request, gv *groupVer) {
	gvs := gv.version
	if gv.group != "" {
		gvs = gv.group + "/" + gv.version
	}
	resources := []apiResource{}
	for _, res := range gv.resources {
		resources = append(resources, apiResource{
			Name: res.Plural, SingularName: res.Singular, Namespaced: res.Namespaced, Kind: res.Kind,
			Verbs: objectVerbs, ShortNames: res.ShortNames, Categories: res.Categories,
		})
		for _, sub := range res.subresourceNames() {
			ar := apiResource{Name: res.Plural + "/" + sub, Namespaced: res.Namespaced, Kind: res.Kind, Verbs: subresourceVerbs}
			if sub == "scale" {
				ar.Group, ar.Version, ar.Kind = "autoscaling", "v1", "Scale"
			}
			resources = append(resources, ar)
		}
	}
	r.writeJSON(w, req, http.StatusOK, map[string]any{
		"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gvs, "resources": resources,
	})
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

// The apidiscovery.k8s.io/v2 types.
type (
	discoveryList struct {
		Kind       string           `json:"kind"`
		APIVersion string           `json:"apiVersion"`
		Metadata   struct{}         `json:"metadata"`
		Items      []discoveryGroup `json:"items"`
	}
	discoveryGroup struct {
		Metadata discoveryMeta      `json:"metadata"`
		Versions []discoveryVersion `json:"versions"`
	}
	discoveryMeta struct {
		Name              string `json:"name,omitempty"`
		CreationTimestamp *bool  `json:"creationTimestamp"`
	}
	discoveryVersion struct {
		Version   string              `json:"version"`
		Resources []discoveryResource `json:"resources"`
		Freshness string              `json:"freshness"`
	}
	groupVersionKind struct {
		Group   string `json:"group"`
		Version string `json:"version"`
		Kind    string `json:"kind"`
	}
	discoveryResource struct {
		Resource         string                 `json:"resource"`
		ResponseKind     groupVersionKind       `json:"responseKind"`
		Scope            string                 `json:"scope"`
		SingularResource string                 `json:"singularResource"`
		Verbs            []string               `json:"verbs"`
		ShortNames       []string               `json:"shortNames,omitempty"`
		Categories       []string               `json:"categories,omitempty"`
		Subresources     []discoverySubresource `json:"subresources,omitempty"`
	}
	discoverySubresource struct {
		Subresource  string           `json:"subresource"`
		ResponseKind groupVersionKind `json:"responseKind"`
		Verbs        []string         `json:"verbs"`
	}
)

func (r *Registry) aggregated(core bool) discoveryList {
	out := discoveryList{Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/v2", Items: []discoveryGroup{}}
	groups := r.groupNames()
	if core {
		groups = []string{""}
	}
	for _, g := range groups {
		dg := discoveryGroup{Metadata: discoveryMeta{Name: g}}
		for _, v := range r.versions(g) {
			r.mu.RLock()
			gv := r.groups[g][v.Version]
			r.mu.RUnlock()
			dv := discoveryVersion{Version: v.Version, Freshness: "Current", Resources: []discoveryResource{}}
			for _, res := range gv.resources {
				scope := "Cluster"
				if res.Namespaced {
					scope = "Namespaced"
				}
				dr := discoveryResource{
					Resource: res.Plural, Scope: scope, SingularResource: res.Singular,
					ResponseKind: groupVersionKind{Group: res.Group, Version: res.Version, Kind: res.Kind},
					Verbs:        objectVerbs, ShortNames: res.ShortNames, Categories: res.Categories,
				}
				for _, sub := range res.subresourceNames() {
					ds := discoverySubresource{Subresource: sub, Verbs: subresourceVerbs,
						ResponseKind: groupVersionKind{Group: res.Group, Version: res.Version, Kind: res.Kind}}
					if sub == "scale" {
						ds.ResponseKind = groupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}
					}
					dr.Subresources = append(dr.Subresources, ds)
				}
				dv.Resources = append(dv.Resources, dr)
			}
			dg.Versions = append(dg.Versions, dv)
		}
		out.Items = append(out.Items, dg)
	}
	return out
}
