package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/schema"
)

// OpenAPI v3 (URI-8, in part): /openapi/v3 lists one document per group
// version, and each document describes the resources' paths and schemas.
// kubectl reads these to learn that the server validates fields itself
// (the fieldValidation parameter of PATCH), and `kubectl explain` reads the
// schemas. OpenAPI v2 is not served yet.

const objectMetaRef = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

// serveOpenAPI serves /openapi/v3 and /openapi/v3/{api/v1,apis/G/V}.
func (r *Registry) serveOpenAPI(w http.ResponseWriter, req *http.Request, path string) {
	rest := strings.TrimPrefix(strings.TrimPrefix(path, "/openapi/v3"), "/")
	if rest == "" {
		paths := map[string]any{}
		for _, gv := range r.groupVersions() {
			doc := mustJSON(r.openAPIDoc(gv))
			sum := sha256.Sum256(doc)
			paths[gvPath(gv)] = map[string]string{"serverRelativeURL": "/openapi/v3/" + gvPath(gv) + "?hash=" + strings.ToUpper(hex.EncodeToString(sum[:]))}
		}
		r.writeJSON(w, req, http.StatusOK, map[string]any{"paths": paths})
		return
	}
	for _, gv := range r.groupVersions() {
		if gvPath(gv) == rest {
			r.writeJSON(w, req, http.StatusOK, r.openAPIDoc(gv))
			return
		}
	}
	writeStatus(w, req, errPathNotFound())
}

func gvPath(gv *groupVer) string {
	if gv.group == "" {
		return "api/" + gv.version
	}
	return "apis/" + gv.group + "/" + gv.version
}

func (r *Registry) groupVersions() []*groupVer {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []*groupVer
	for _, vs := range r.groups {
		for _, gv := range vs {
			out = append(out, gv)
		}
	}
	slices.SortFunc(out, func(a, b *groupVer) int { return strings.Compare(gvPath(a), gvPath(b)) })
	return out
}

// schemaName is the components key of a kind: "com.example.v1.Widget".
func (res *Resource) schemaName() string {
	if res.Group == "" {
		return "io.k8s.api.core." + res.Version + "." + res.Kind
	}
	parts := strings.Split(res.Group, ".")
	slices.Reverse(parts)
	return strings.Join(parts, ".") + "." + res.Version + "." + res.Kind
}

func (r *Registry) openAPIDoc(gv *groupVer) map[string]any {
	paths := map[string]any{}
	schemas := map[string]any{
		"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": objectMetaSchema(),
	}
	for _, res := range gv.resources {
		gvk := map[string]any{"group": res.Group, "version": res.Version, "kind": res.Kind}
		ref := map[string]any{"$ref": "#/components/schemas/" + res.schemaName()}
		schemas[res.schemaName()] = kindSchema(res, gvk)
		base := "/" + gvPath(gv) + "/"
		if res.Namespaced {
			base += "namespaces/{namespace}/"
		}
		op := func(action string, params ...string) map[string]any {
			ps := []any{}
			for _, p := range params {
				ps = append(ps, map[string]any{"name": p, "in": "query", "schema": map[string]any{"type": "string"}})
			}
			return map[string]any{
				"operationId":                     action + res.Kind,
				"parameters":                      ps,
				"responses":                       map[string]any{"200": map[string]any{"description": "OK", "content": map[string]any{"application/json": map[string]any{"schema": ref}}}},
				"x-kubernetes-action":             action,
				"x-kubernetes-group-version-kind": gvk,
			}
		}
		write := []string{"dryRun", "fieldManager", "fieldValidation", "pretty"}
		paths[base+res.Plural+"/{name}"] = map[string]any{
			"get":    op("get", "pretty", "resourceVersion"),
			"put":    op("put", write...),
			"patch":  op("patch", append(write, "force")...),
			"delete": op("delete", "dryRun", "gracePeriodSeconds", "propagationPolicy"),
		}
		paths[base+res.Plural] = map[string]any{
			"get":    op("list", "labelSelector", "fieldSelector", "limit", "continue", "resourceVersion", "resourceVersionMatch", "watch", "sendInitialEvents", "allowWatchBookmarks", "timeoutSeconds"),
			"post":   op("post", write...),
			"delete": op("deletecollection", "labelSelector", "fieldSelector", "dryRun"),
		}
		if res.Status {
			paths[base+res.Plural+"/{name}/status"] = map[string]any{
				"get": op("get", "pretty"), "put": op("put", write...), "patch": op("patch", append(write, "force")...),
			}
		}
	}
	return map[string]any{
		"openapi":    "3.0.0",
		"info":       map[string]any{"title": "Kubernetes", "version": r.opts.Version.GitVersion},
		"paths":      paths,
		"components": map[string]any{"schemas": schemas},
	}
}

// kindSchema is the resource's schema with apiVersion, kind and metadata.
func kindSchema(res *Resource, gvk map[string]any) map[string]any {
	s := map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	if res.Schema != nil {
		s = res.Schema.JSON()
	}
	props, _ := s["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		s["properties"] = props
	}
	props["apiVersion"] = map[string]any{"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."}
	props["kind"] = map[string]any{"type": "string", "description": "Kind is a string value representing the REST resource this object represents."}
	props["metadata"] = map[string]any{"allOf": []any{map[string]any{"$ref": objectMetaRef}}, "description": "Standard object's metadata."}
	s["x-kubernetes-group-version-kind"] = []any{gvk}
	return s
}

// objectMetaSchema is ObjectMeta's schema as published: list types, map
// types and patch strategies included, as kube publishes it.
func objectMetaSchema() map[string]any {
	m := schema.ObjectMeta().JSON()
	m["description"] = "ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create."
	return m
}
