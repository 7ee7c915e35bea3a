package openapi

import (
	"maps"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/schema"
)

// Resource is what the documents say of one served resource.
type Resource struct {
	Group      string // "" for the core group
	Version    string
	Kind       string
	Plural     string
	Namespaced bool
	Status     bool           // has the status subresource
	Scale      bool           // has the scale subresource
	Protobuf   bool           // reads and writes protobuf
	Schema     *schema.Schema // the whole object's; nil for any object
	// Definition, when set, is the name of the resource's schema among
	// Definitions (which returns named definitions in kube's published
	// form), published in place of Schema with every definition it
	// reaches by $ref; when Definitions has no such name, Schema is.
	Definition  string
	Definitions func() map[string]map[string]any
}

// GroupVersion is one group version and its resources.
type GroupVersion struct {
	Group, Version string
	Resources      []Resource
}

// Path is the group version's path: "api/v1" for the core group,
// "apis/{group}/{version}" for the others.
func (gv GroupVersion) Path() string { return path(gv.Group, gv.Version) }

func path(group, version string) string {
	if group == "" {
		return "api/" + version
	}
	return "apis/" + group + "/" + version
}

const (
	objectMetaName = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
	objectMetaRef  = "#/components/schemas/" + objectMetaName
)

// schemaName is the components key of a kind: "com.example.v1.Widget".
func (res *Resource) schemaName() string {
	if res.Group == "" {
		return "io.k8s.api.core." + res.Version + "." + res.Kind
	}
	parts := strings.Split(res.Group, ".")
	slices.Reverse(parts)
	return strings.Join(parts, ".") + "." + res.Version + "." + res.Kind
}

// V3 is the OpenAPI v3 document of one group version, served at
// /openapi/v3/{Path}; gitVersion is the server's version, the document's
// info.version.
func V3(gitVersion string, gv GroupVersion) map[string]any {
	paths := map[string]any{}
	schemas := map[string]any{
		objectMetaName: objectMetaSchema(),
	}
	for i := range gv.Resources {
		res := &gv.Resources[i]
		gvk := map[string]any{"group": res.Group, "version": res.Version, "kind": res.Kind}
		ref := map[string]any{"$ref": "#/components/schemas/" + res.schemaName()}
		if res.Definition != "" && res.Definitions()[res.Definition] != nil {
			ref["$ref"] = "#/components/schemas/" + res.Definition
			addDefinitions(schemas, res, gvk)
		} else {
			schemas[res.schemaName()] = kindSchema(res, gvk)
		}
		base := "/" + gv.Path() + "/"
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
		"info":       map[string]any{"title": "Kubernetes", "version": gitVersion},
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

// addDefinitions adds res's definition, with its group-version-kind, and
// every definition it reaches by $ref to schemas. Definitions are shared
// between documents: the kind's is copied before it is marked, the
// others are published as they are.
func addDefinitions(schemas map[string]any, res *Resource, gvk map[string]any) {
	defs := res.Definitions()
	kind := maps.Clone(defs[res.Definition])
	kind["x-kubernetes-group-version-kind"] = []any{gvk}
	schemas[res.Definition] = kind
	todo, seen := []any{kind}, map[string]bool{res.Definition: true}
	for len(todo) > 0 {
		n := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		switch n := n.(type) {
		case map[string]any:
			for k, v := range n {
				name, ok := strings.CutPrefix(asString(v), "#/components/schemas/")
				if k != "$ref" || !ok {
					todo = append(todo, v)
					continue
				}
				if seen[name] {
					continue
				}
				seen[name] = true
				if d, ok := defs[name]; ok { // kube's ObjectMeta replaces kapi's
					schemas[name] = d
					todo = append(todo, d)
				}
			}
		case []any:
			todo = append(todo, n...)
		}
	}
}

func asString(v any) string { s, _ := v.(string); return s }
