package openapi

import (
	"slices"

	"github.com/kapi-dev/kapi/schema"
)

// The Swagger 2.0 forms of the schemas: a kind's converted as kube
// converts a CRD's structural schema, and the meta types they refer to.

// kindSchemaV2 is kindSchema in Swagger 2.0, as kube's CRD builder makes
// it: the schema converted by toV2, metadata a plain $ref, and for a
// resource without a schema, or one that keeps unknown fields at its root,
// only "type: object" (kubectl would otherwise refuse every field it does
// not list).
func kindSchemaV2(res *Resource) map[string]any {
	var s map[string]any
	if res.Schema == nil || res.Schema.PreserveUnknownFields {
		s = map[string]any{"type": "object"}
		if res.Schema != nil && res.Schema.Description != "" {
			s["description"] = res.Schema.Description
		}
	} else {
		s = toV2(res.Schema).JSON()
		addEmbeddedV2(s)
		props, _ := s["properties"].(map[string]any)
		if props == nil {
			props = map[string]any{}
			s["properties"] = props
		}
		props["apiVersion"] = map[string]any{"type": "string", "description": apiVersionDoc}
		props["kind"] = map[string]any{"type": "string", "description": kindDoc}
		props["metadata"] = map[string]any{"$ref": definition + metaV1Def + "ObjectMeta", "description": metadataDoc}
	}
	s["x-kubernetes-group-version-kind"] = []any{map[string]any{"group": res.Group, "version": res.Version, "kind": res.Kind}}
	return s
}

const (
	apiVersionDoc = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values."
	kindDoc       = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. In CamelCase."
	metadataDoc   = "Standard object's metadata."
	scaleDef      = "io.k8s.api.autoscaling.v1.Scale"
)

// listSchemaV2 is the schema of res's list kind.
func listSchemaV2(res *Resource) map[string]any {
	return map[string]any{
		"type":        "object",
		"description": res.Kind + "List is a list of " + res.Kind,
		"required":    []any{"items"},
		"properties": map[string]any{
			"apiVersion": map[string]any{"type": "string", "description": apiVersionDoc},
			"kind":       map[string]any{"type": "string", "description": kindDoc},
			"metadata":   map[string]any{"$ref": definition + metaV1Def + "ListMeta", "description": "Standard list metadata."},
			"items": map[string]any{
				"type": "array", "description": "List of " + res.Plural + ".",
				"items": map[string]any{"$ref": definition + res.schemaName()},
			},
		},
		"x-kubernetes-group-version-kind": []any{map[string]any{"group": res.Group, "version": res.Version, "kind": res.Kind + "List"}},
	}
}

// toV2 is s as Swagger 2.0 can say it, following kube's
// ToStructuralOpenAPIV2: allOf, anyOf, oneOf and not are dropped; a
// nullable node loses its type, items and properties (and its name in its
// parent's required list); a node that keeps unknown fields loses its
// items and properties, and its type if object; an array without items
// loses its type. kubectl cannot read the rest.
func toV2(in *schema.Schema) *schema.Schema {
	if in == nil {
		return nil
	}
	s := *in
	s.AllOf, s.AnyOf, s.OneOf, s.Not = nil, nil, nil, nil
	if s.Nullable {
		s.Type, s.Nullable, s.Items, s.Properties = "", false, nil, nil
	}
	if s.PreserveUnknownFields {
		s.Items, s.Properties = nil, nil
		if s.Type == "object" {
			s.Type = ""
		}
	}
	if s.Items == nil && s.Type == "array" {
		s.Type = ""
	}
	if s.Properties != nil {
		props := make(map[string]*schema.Schema, len(s.Properties))
		for k, v := range s.Properties {
			if v != nil && v.Nullable {
				s.Required = slices.DeleteFunc(slices.Clone(s.Required), func(r string) bool { return r == k })
			}
			props[k] = toV2(v)
		}
		s.Properties = props
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Nullable {
		s.Required = nil
	}
	s.AdditionalProperties = toV2(s.AdditionalProperties)
	s.Items = toV2(s.Items)
	return &s
}

// addEmbeddedV2 gives each x-kubernetes-embedded-resource node of m (a
// v2 schema in JSON form) apiVersion, kind and metadata, and requires
// apiVersion and kind, as kube's CRD builder does; nodes that keep
// unknown fields are left as they are.
func addEmbeddedV2(m map[string]any) {
	if props, ok := m["properties"].(map[string]any); ok {
		for _, p := range props {
			if pm, ok := p.(map[string]any); ok {
				addEmbeddedV2(pm)
			}
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if sub, ok := m[k].(map[string]any); ok {
			addEmbeddedV2(sub)
		}
	}
	if m["x-kubernetes-preserve-unknown-fields"] == true || m["x-kubernetes-embedded-resource"] != true {
		return
	}
	props, _ := m["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		m["properties"] = props
	}
	props["apiVersion"] = map[string]any{"type": "string", "description": apiVersionDoc}
	props["kind"] = map[string]any{"type": "string", "description": kindDoc}
	props["metadata"] = map[string]any{"$ref": definition + metaV1Def + "ObjectMeta", "description": metadataDoc}
	req, _ := m["required"].([]any)
	for _, k := range []string{"kind", "apiVersion"} {
		if !slices.Contains(req, any(k)) {
			req = append(req, k)
		}
	}
	m["required"] = req
}

// smpAgreesWithClients reports whether a client that computes a strategic
// merge patch from s's patch hints, as kubectl does from OpenAPI v2, gets
// the merge kapi applies: kapi also merges list-type map and set lists that
// have no patch strategy, where the client would replace them, so a
// resource with such a list is offered without strategic merge in v2 (the
// client then sends a merge patch, as it does for kube's custom resources).
func smpAgreesWithClients(s *schema.Schema) bool {
	if s == nil {
		return true
	}
	if (s.ListType == "map" || s.ListType == "set") && s.PatchStrategy == "" {
		return false
	}
	for _, p := range s.Properties {
		if !smpAgreesWithClients(p) {
			return false
		}
	}
	return smpAgreesWithClients(s.Items) && smpAgreesWithClients(s.AdditionalProperties)
}

func objectMetaSchemaV2() map[string]any {
	m := toV2(schema.ObjectMeta()).JSON()
	m["description"] = "ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create."
	return m
}

func listMetaSchemaV2() map[string]any {
	str := func(d string) map[string]any { return map[string]any{"type": "string", "description": d} }
	return map[string]any{
		"type":        "object",
		"description": "ListMeta describes metadata that synthetic resources must have, including lists and various status objects.",
		"properties": map[string]any{
			"continue":           str("continue may be set if the user set a limit on the number of items returned."),
			"remainingItemCount": map[string]any{"type": "integer", "format": "int64", "description": "The number of subsequent items in the list which are not included in this list response."},
			"resourceVersion":    str("String that identifies the server's internal version of this object."),
			"selfLink":           str("Deprecated: selfLink is a legacy read-only field that is no longer populated by the system."),
		},
	}
}

func statusSchemaV2() map[string]any {
	str := func(d string) map[string]any { return map[string]any{"type": "string", "description": d} }
	return map[string]any{
		"type":        "object",
		"description": "Status is a return value for calls that don't return other objects.",
		"properties": map[string]any{
			"apiVersion": map[string]any{"type": "string", "description": apiVersionDoc},
			"kind":       map[string]any{"type": "string", "description": kindDoc},
			"metadata":   map[string]any{"$ref": definition + metaV1Def + "ListMeta", "description": "Standard list metadata."},
			"code":       map[string]any{"type": "integer", "format": "int32", "description": "Suggested HTTP return code for this status, 0 if not set."},
			"details": map[string]any{
				"type": "object", "description": "Extended data associated with the reason.",
				"x-kubernetes-preserve-unknown-fields": true,
			},
			"message": str("A human-readable description of the status of this operation."),
			"reason":  str("A machine-readable description of why this operation is in the \"Failure\" status."),
			"status":  str("Status of the operation. One of: \"Success\" or \"Failure\"."),
		},
		"x-kubernetes-group-version-kind": []any{map[string]any{"group": "", "version": "v1", "kind": "Status"}},
	}
}

func deleteOptionsSchemaV2() map[string]any {
	return map[string]any{
		"type":        "object",
		"description": "DeleteOptions may be provided when deleting an API object.",
		"properties": map[string]any{
			"apiVersion": map[string]any{"type": "string", "description": apiVersionDoc},
			"kind":       map[string]any{"type": "string", "description": kindDoc},
			"dryRun": map[string]any{
				"type": "array", "items": map[string]any{"type": "string"}, "x-kubernetes-list-type": "atomic",
				"description": "When present, indicates that modifications should not be persisted.",
			},
			"gracePeriodSeconds": map[string]any{"type": "integer", "format": "int64", "description": "The duration in seconds before the object should be deleted."},
			"orphanDependents":   map[string]any{"type": "boolean", "description": "Deprecated: please use the PropagationPolicy."},
			"preconditions": map[string]any{
				"type": "object", "description": "Must be fulfilled before a deletion is carried out.",
				"properties": map[string]any{
					"resourceVersion": map[string]any{"type": "string", "description": "Specifies the target ResourceVersion"},
					"uid":             map[string]any{"type": "string", "description": "Specifies the target UID."},
				},
			},
			"propagationPolicy": map[string]any{"type": "string", "description": "Whether and how garbage collection will be performed: Orphan, Background or Foreground."},
		},
	}
}

// scaleSchemaV2 is autoscaling/v1 Scale, the scale subresource's kind.
func scaleSchemaV2() map[string]any {
	i32 := func(d string) map[string]any {
		return map[string]any{"type": "integer", "format": "int32", "description": d}
	}
	return map[string]any{
		"type":        "object",
		"description": "Scale represents a scaling request for a resource.",
		"properties": map[string]any{
			"apiVersion": map[string]any{"type": "string", "description": apiVersionDoc},
			"kind":       map[string]any{"type": "string", "description": kindDoc},
			"metadata":   map[string]any{"$ref": definition + metaV1Def + "ObjectMeta", "description": metadataDoc},
			"spec": map[string]any{
				"type": "object", "description": "spec defines the behavior of the scale.",
				"properties": map[string]any{"replicas": i32("replicas is the desired number of instances for the scaled object.")},
			},
			"status": map[string]any{
				"type": "object", "description": "status is the current status of the scale.", "required": []any{"replicas"},
				"properties": map[string]any{
					"replicas": i32("replicas is the actual number of observed instances of the scaled object."),
					"selector": map[string]any{"type": "string", "description": "selector is the label query over pods that should match the replicas count."},
				},
			},
		},
		"x-kubernetes-group-version-kind": []any{map[string]any{"group": "autoscaling", "version": "v1", "kind": "Scale"}},
	}
}
