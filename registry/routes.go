package registry

import (
	"net/http"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/registry/request"
)

// The router's table. Every request is routed once (request.Parse gives
// its Info), authenticated and authorized (auth.go), and then served by
// the handler this table names for its endpoint and verb: a resource
// request by resourceRoutes, any other by nonResourceHandler. routeTable
// enumerates both, and the route test asks for every entry, so a handler
// added here is authorized by construction.

// endpoint is what a resource request addresses.
type endpoint uint8

const (
	collection endpoint = iota // RESOURCE
	item                       // RESOURCE/NAME
	statusSub                  // RESOURCE/NAME/status
	scaleSub                   // RESOURCE/NAME/scale
	customSub                  // RESOURCE/NAME/SUB, a Resource.Subresources handler
	updateSub                  // RESOURCE/NAME/SUB, one of Resource.UpdateSubresources
	reviews                    // RESOURCE of a Resource.Review
)

// verbHandler serves a routed resource request.
type verbHandler func(r *Registry, w http.ResponseWriter, rq *routed) error

// resourceRoutes name the handler of each verb at each endpoint; a verb
// missing from an endpoint's row answers 405.
var resourceRoutes = [...]map[string]verbHandler{
	collection: {
		"list":             (*Registry).serveList,
		"watch":            (*Registry).serveWatch,
		"create":           (*Registry).serveCreate,
		"deletecollection": (*Registry).serveDeleteCollection,
	},
	item: {
		"get":    (*Registry).serveGet,
		"watch":  (*Registry).serveWatch, // the legacy /watch/ prefix
		"update": (*Registry).serveUpdate,
		"patch":  (*Registry).servePatch,
		"delete": (*Registry).serveDelete,
	},
	statusSub: {
		"get":    (*Registry).serveGet,
		"update": (*Registry).serveUpdate,
		"patch":  (*Registry).servePatch,
	},
	scaleSub: {
		"get":    (*Registry).serveSubresource,
		"update": (*Registry).serveSubresource,
		"patch":  (*Registry).serveSubresource,
	},
	reviews: {
		"create": (*Registry).serveReview,
	},
	updateSub: {
		"update": (*Registry).serveUpdate,
	},
	customSub: {
		"get":    (*Registry).serveCustom,
		"create": (*Registry).serveCustom,
		"update": (*Registry).serveCustom,
		"patch":  (*Registry).serveCustom,
		"delete": (*Registry).serveCustom,
	},
}

// verbMethods is the HTTP method of each verb, for routeTable.
var verbMethods = map[string]string{
	"get": http.MethodGet, "list": http.MethodGet, "watch": http.MethodGet,
	"create": http.MethodPost, "update": http.MethodPut, "patch": http.MethodPatch,
	"delete": http.MethodDelete, "deletecollection": http.MethodDelete,
}

// endpointOf is the endpoint a routed request addresses, or false when
// res has no such subresource.
func endpointOf(res *Resource, name, sub string) (endpoint, bool) {
	switch {
	case res.Review != nil:
		return reviews, name == ""
	case name == "":
		return collection, true
	case sub == "":
		return item, true
	case res.writesStatus(sub):
		return statusSub, true
	case sub == "scale" && res.Scale != nil:
		return scaleSub, true
	case slices.Contains(res.UpdateSubresources, sub):
		return updateSub, true
	}
	_, ok := res.Subresources[sub]
	return customSub, ok
}

// nonResourceHandler is the handler of a non-resource path: health,
// /version, discovery and OpenAPI.
func (r *Registry) nonResourceHandler(path string) (func(http.ResponseWriter, *http.Request), bool) {
	path = strings.TrimSuffix(path, "/")
	switch path {
	case "/healthz", "/livez", "/readyz":
		return serveHealth, true
	case "/version":
		return func(w http.ResponseWriter, req *http.Request) { r.writeJSON(w, req, http.StatusOK, r.opts.Version) }, true
	case "/api", "/apis":
		return func(w http.ResponseWriter, req *http.Request) { r.serveRootDiscovery(w, req, path == "/api") }, true
	case "/openapi/v2":
		return r.serveOpenAPIV2, true
	}
	if path == "/openapi/v3" || strings.HasPrefix(path, "/openapi/v3/") {
		return func(w http.ResponseWriter, req *http.Request) { r.serveOpenAPI(w, req, path) }, true
	}
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	switch {
	case len(parts) == 2 && parts[0] == "apis":
		return func(w http.ResponseWriter, req *http.Request) { r.serveGroup(w, req, parts[1]) }, true
	case len(parts) == 2 && parts[0] == "api", len(parts) == 3 && parts[0] == "apis":
		group := ""
		if len(parts) == 3 {
			group = parts[1]
		}
		gv := r.tab.Load().groups[group][parts[len(parts)-1]]
		if gv == nil {
			return nil, false
		}
		return func(w http.ResponseWriter, req *http.Request) { r.serveResourceList(w, req, gv) }, true
	}
	return nil, false
}

func serveHealth(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte("ok"))
}

// route is one entry of the route table as a request that reaches it.
type route struct {
	Method, Path string
	// Info is what the request's attributes must be.
	Info request.Info
}

// routeTable enumerates the router's table for the resources registered
// now: each non-resource path, and each verb of each endpoint of each
// resource, as a request that reaches that handler.
func (r *Registry) routeTable() []route {
	var out []route
	nonResource := []string{"/healthz", "/livez", "/readyz", "/version", "/api", "/apis", "/openapi/v2", "/openapi/v3"}
	nonResource = append(nonResource, r.extra.list()...)
	t := r.tab.Load()
	for g, vs := range t.groups {
		if g != "" {
			nonResource = append(nonResource, "/apis/"+g)
		}
		for v := range vs {
			p := "/api/" + v
			if g != "" {
				p = "/apis/" + g + "/" + v
			}
			nonResource = append(nonResource, p, "/openapi/v3"+p)
		}
	}
	for _, p := range nonResource {
		out = append(out, route{Method: http.MethodGet, Path: p, Info: request.Info{Path: p, Verb: "get"}})
	}
	for _, res := range t.resources {
		out = append(out, res.routes()...)
	}
	return out
}

// routes are the resource routes of res.
func (res *Resource) routes() []route {
	ns := ""
	if res.Namespaced {
		ns = "ns1"
	}
	subs := map[endpoint][]string{collection: {""}, item: {""}}
	if res.Review != nil {
		subs = map[endpoint][]string{reviews: {""}}
	}
	if res.Status {
		subs[statusSub] = append([]string{"status"}, res.StatusSubresources...)
	}
	if res.Scale != nil {
		subs[scaleSub] = []string{"scale"}
	}
	for s := range res.Subresources {
		subs[customSub] = append(subs[customSub], s)
	}
	subs[updateSub] = append(subs[updateSub], res.UpdateSubresources...)
	prefix := "/api/" + res.Version
	if res.Group != "" {
		prefix = "/apis/" + res.Group + "/" + res.Version
	}
	var out []route
	for ep, names := range subs {
		for _, sub := range names {
			for verb := range resourceRoutes[ep] {
				if verb == "deletecollection" && res.Strategy.NoDeleteCollection {
					continue
				}
				info := request.Info{IsResourceRequest: true, Verb: verb, APIGroup: res.Group, APIVersion: res.Version,
					Namespace: ns, Resource: res.Plural, Subresource: sub, APIPrefix: "apis"}
				if res.Group == "" {
					info.APIPrefix = "api"
				}
				path, query := prefix, ""
				if verb == "watch" && ep == item {
					path += "/watch"
				}
				if ns != "" {
					path += "/namespaces/" + ns
				}
				path += "/" + res.Plural
				if ep != collection && ep != reviews {
					info.Name = "obj1"
					path += "/obj1"
					if res.Plural == "namespaces" { // namespaces/NAME: kube's request info names the namespace too
						info.Namespace = info.Name
					}
				}
				if sub != "" {
					path += "/" + sub
				}
				if verb == "watch" && ep == collection {
					query = "?watch=true"
				}
				info.Path = path
				out = append(out, route{Method: verbMethods[verb], Path: path + query, Info: info})
			}
		}
	}
	return out
}
