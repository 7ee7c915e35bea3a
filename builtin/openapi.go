package builtin

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/kapi-dev/kapi/registry"
)

// The OpenAPI v3 documents publish the built-in kinds as kube does: named
// definitions joined by $ref (kubectl explain prints "<PodSpec>" from the
// name) with the enums of k8s.io/api's +enum types, read from the same
// schemas.json.gz as the validating schemas, rewritten back to kube's
// published form once, on the first document built:
//
//	{"$ref": "io.k8s.api.core.v1.PodSpec", "description": "Specification ...", "default": {}}
//
// becomes
//
//	{"allOf": [{"$ref": "#/components/schemas/io.k8s.api.core.v1.PodSpec"}],
//	 "description": "Specification ...", "default": {}}
//
// and a $ref with no siblings {"$ref": "#/components/schemas/NAME"}.

// published returns the definitions in kube's published form; shared,
// never changed.
var published = sync.OnceValues(func() (map[string]map[string]any, error) {
	zr, err := gzip.NewReader(bytes.NewReader(schemasGz))
	if err != nil {
		return nil, fmt.Errorf("builtin: schemas: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("builtin: schemas: %w", err)
	}
	var doc struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("builtin: schemas: %w", err)
	}
	for _, d := range doc.Definitions {
		publish(d)
	}
	return doc.Definitions, nil
})

// publish rewrites node, and the nodes under it, to kube's published form.
func publish(node map[string]any) {
	if ref, ok := node["$ref"].(string); ok {
		ref = "#/components/schemas/" + ref
		if len(node) == 1 {
			node["$ref"] = ref
			return
		}
		delete(node, "$ref")
		node["allOf"] = []any{map[string]any{"$ref": ref}}
		return
	}
	if props, ok := node["properties"].(map[string]any); ok {
		for _, p := range props {
			if pm, ok := p.(map[string]any); ok {
				publish(pm)
			}
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if sub, ok := node[k].(map[string]any); ok {
			publish(sub)
		}
	}
}

// Definitions returns kube's OpenAPI v3 definitions of the built-in
// kinds, of the kinds the registry serves itself (namespaces, RBAC, the
// reviews, webhook configurations) and of configmaps, and of every type
// they reach, by name, in kube's published form: what
// registry.Options.Definitions takes. Shared: never change them. Nil
// only if the embedded data is corrupt (a test checks it is not).
func Definitions() map[string]map[string]any {
	defs, _ := published()
	return defs
}

// OpenAPI is what the OpenAPI documents publish for a resource serving
// the k8s.io/api kind whose definition is name
// ("io.k8s.api.core.v1.ConfigMap"): Resource.OpenAPI.
func OpenAPI(name string) *registry.OpenAPIDefinitions {
	return &registry.OpenAPIDefinitions{Name: name, Schemas: Definitions}
}
