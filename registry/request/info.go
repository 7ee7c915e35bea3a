package request

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// Info is what a request asks, as kube-apiserver's RequestInfo describes
// it. For a resource request Verb is one of get, list, watch, create,
// update, patch, delete, deletecollection (or "" for a method the API has
// no verb for); for a non-resource request it is the lowercased method and
// only Path is set besides.
type Info struct {
	// IsResourceRequest is false for discovery, /version, /healthz,
	// /openapi and every other path outside /api/V/… and /apis/G/V/….
	IsResourceRequest bool
	// Path is the URL path as sent.
	Path string
	Verb string

	APIPrefix   string // "api" or "apis"
	APIGroup    string // "" for the core group
	APIVersion  string
	Namespace   string
	Resource    string
	Subresource string
	Name        string
	// Parts are the path's segments after the version and the namespace
	// (resource, name, subresource and anything beyond).
	Parts []string
}

// ErrNoResource is Parse's error for a resource path that names no
// resource, such as /api/v1/watch.
var ErrNoResource = errors.New("request: unable to determine kind and namespace from url")

// Parse reads a request's Info from its method and URL by kube-apiserver's
// rules (k8s.io/apiserver's RequestInfoFactory with the prefixes "api",
// the core group's, and "apis"):
//   - a path with fewer than three segments, or four under /apis, is a
//     non-resource request;
//   - "watch" (or "proxy") after the version makes the verb watch (the
//     legacy prefix);
//   - namespaces/NS/… sets the namespace, except namespaces/NS/status and
//     namespaces/NS/finalize, which address the namespace itself;
//   - a GET on a collection is list, or watch with ?watch set to anything
//     but false or 0, and its fieldSelector metadata.name=X names X;
//   - a DELETE on a collection is deletecollection.
func Parse(method string, u *url.URL) (*Info, error) {
	info := &Info{Path: u.Path, Verb: strings.ToLower(method)}
	parts := splitPath(u.Path)
	if len(parts) < 3 || (parts[0] != "api" && parts[0] != "apis") {
		return info, nil
	}
	info.APIPrefix, parts = parts[0], parts[1:]
	if info.APIPrefix == "apis" {
		if len(parts) < 3 {
			return info, nil
		}
		info.APIGroup, parts = parts[0], parts[1:]
	}
	info.IsResourceRequest = true
	info.APIVersion, parts = parts[0], parts[1:]
	if parts[0] == "watch" || parts[0] == "proxy" {
		if len(parts) < 2 {
			return info, ErrNoResource
		}
		info.Verb, parts = parts[0], parts[1:]
	} else {
		info.Verb = methodVerb(method)
	}
	if parts[0] == "namespaces" && len(parts) > 1 {
		info.Namespace = parts[1]
		if len(parts) > 2 && parts[2] != "status" && parts[2] != "finalize" {
			parts = parts[2:]
		}
	}
	info.Parts = parts
	switch {
	case len(parts) >= 3 && info.Verb != "proxy":
		info.Subresource = parts[2]
		fallthrough
	case len(parts) >= 2:
		info.Name = parts[1]
		fallthrough
	default:
		info.Resource = parts[0]
	}
	if info.Name == "" && info.Verb == "get" {
		q := u.Query()
		info.Verb = "list"
		if w, ok := q["watch"]; ok && !isFalse(w[0]) {
			info.Verb = "watch"
		}
		if name, ok := exactName(q.Get("fieldSelector")); ok {
			info.Name = name
		}
	}
	if info.Name == "" && info.Verb == "delete" {
		info.Verb = "deletecollection"
	}
	return info, nil
}

// methodVerb is a resource request's verb by its HTTP method.
func methodVerb(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead:
		return "get"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return ""
}

// isFalse is kube's reading of a boolean query parameter: anything but
// "false" and "0" (in any case) is true, even an empty value.
func isFalse(s string) bool { s = strings.ToLower(s); return s == "false" || s == "0" }

// exactName is the name a field selector pins with its first
// metadata.name=X (or ==X) term, as kube's RequiresExactMatch (other terms
// may stand beside it); none when the selector does not parse or X is not
// a valid path segment.
func exactName(sel string) (string, bool) {
	if sel == "" {
		return "", false
	}
	name, found := "", false
	for _, term := range strings.Split(sel, ",") {
		k, v, ok := strings.Cut(term, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return "", false // kube's selector parse fails: no name
		}
		if strings.HasSuffix(k, "!") {
			continue
		}
		v = strings.TrimPrefix(v, "=")
		if strings.TrimSpace(k) != "metadata.name" {
			continue
		}
		v = strings.TrimSpace(v)
		if !found {
			name, found = v, true
		}
	}
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/%\\") {
		return "", false
	}
	return name, found
}

// splitPath is the path's segments without the leading and trailing
// slash; "/" has none.
func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

type infoKey struct{}

// WithInfo returns ctx carrying info.
func WithInfo(ctx context.Context, info *Info) context.Context {
	return context.WithValue(ctx, infoKey{}, info)
}

// InfoFrom returns the Info the router stored in ctx.
func InfoFrom(ctx context.Context) (*Info, bool) {
	info, ok := ctx.Value(infoKey{}).(*Info)
	return info, ok
}
