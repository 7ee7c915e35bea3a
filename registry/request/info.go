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
//   - "watch" after the version makes the verb watch (the legacy prefix);
//   - namespaces/NS/… sets the namespace, except namespaces/NS/status and
//     namespaces/NS/finalize, which address the namespace itself;
//   - a GET on a collection is list, or watch with ?watch=true (or 1), and
//     a collection's fieldSelector metadata.name=X names X;
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
	if parts[0] == "watch" {
		if len(parts) < 2 {
			return info, ErrNoResource
		}
		info.Verb, parts = "watch", parts[1:]
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
	case len(parts) >= 3:
		info.Subresource = parts[2]
		fallthrough
	case len(parts) == 2:
		info.Name = parts[1]
		fallthrough
	default:
		info.Resource = parts[0]
	}
	if info.Name == "" && info.Verb == "get" {
		q := u.Query()
		info.Verb = "list"
		if isTrue(q.Get("watch")) {
			info.Verb = "watch"
		}
		if name, ok := exactName(q.Get("fieldSelector")); ok {
			info.Name = name
		}
	} else if info.Name == "" && info.Verb == "watch" {
		if name, ok := exactName(u.Query().Get("fieldSelector")); ok {
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

func isTrue(s string) bool {
	return s == "true" || s == "1" || s == "True" || s == "TRUE" || s == "t" || s == "T"
}

// exactName is the name a field selector pins with metadata.name=X (or
// ==X) and nothing else that could widen it, as kube's RequiresExactMatch:
// any other requirement may stand beside it. X must be a valid path
// segment.
func exactName(sel string) (string, bool) {
	if sel == "" {
		return "", false
	}
	for _, term := range strings.Split(sel, ",") {
		k, v, ok := strings.Cut(term, "=")
		if !ok || strings.HasSuffix(k, "!") {
			continue
		}
		v = strings.TrimPrefix(v, "=")
		if strings.TrimSpace(k) != "metadata.name" {
			continue
		}
		v = strings.TrimSpace(v)
		if v == "" || v == "." || v == ".." || strings.ContainsAny(v, "/%") {
			return "", false
		}
		return v, true
	}
	return "", false
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
