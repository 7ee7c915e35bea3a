package builtin

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/kapi-dev/kapi/schema"
)

// schemasGz is kube's OpenAPI v3 definitions of the built-in kinds and
// every type they reach, rewritten by gen/builtin: {"definitions": {NAME:
// SCHEMA}}, where a node {"$ref": NAME, ...} is the named definition with
// the node's description and default. Shared definitions (PodSpec in every
// workload) are one *schema.Schema each, so the whole set is built once,
// on first use, in a few milliseconds and about a megabyte.
//
//go:embed schemas.json.gz
var schemasGz []byte

var (
	defsOnce sync.Once
	defs     map[string]*schema.Schema
	quants   quantities // the nodes of defs that are resource.Quantity
	defsErr  error
)

const (
	quantityDef     = "io.k8s.apimachinery.pkg.api.resource.Quantity"
	rawExtensionDef = "io.k8s.apimachinery.pkg.runtime.RawExtension"
)

// definitions returns the built-in schemas by OpenAPI name
// ("io.k8s.api.core.v1.Pod"). They are shared: callers must not change
// them.
func definitions() (map[string]*schema.Schema, error) {
	defsOnce.Do(func() { defs, quants, defsErr = load(schemasGz) })
	return defs, defsErr
}

func loadDefinitions(gz []byte) (map[string]*schema.Schema, error) {
	d, _, err := load(gz)
	return d, err
}

func load(gz []byte) (map[string]*schema.Schema, quantities, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, nil, fmt.Errorf("builtin: schemas: %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, nil, fmt.Errorf("builtin: schemas: %w", err)
	}
	var doc struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		return nil, nil, fmt.Errorf("builtin: schemas: %w", err)
	}
	l := &linker{raw: doc.Definitions, built: map[string]*schema.Schema{}, building: map[string]bool{}, quantities: quantities{}}
	for name := range doc.Definitions {
		if _, err := l.def(name); err != nil {
			return nil, nil, err
		}
	}
	return l.built, l.quantities, nil
}

// linker builds definitions, each once, resolving $ref to the shared
// *schema.Schema of the named definition.
type linker struct {
	raw        map[string]map[string]any
	built      map[string]*schema.Schema
	building   map[string]bool
	quantities quantities
}

func (l *linker) def(name string) (*schema.Schema, error) {
	if s, ok := l.built[name]; ok {
		return s, nil
	}
	m, ok := l.raw[name]
	if !ok {
		return nil, fmt.Errorf("builtin: schemas: no definition %q", name)
	}
	if l.building[name] {
		return nil, fmt.Errorf("builtin: schemas: %q refers to itself", name)
	}
	l.building[name] = true
	s, err := l.node(m, name)
	if err != nil {
		return nil, err
	}
	if s.Type == "object" && len(s.Properties) > 0 {
		// The Go type kube decodes it into, for encoding/json's wording of
		// a decode error: io.k8s.api.core.v1.PodSpec is v1.PodSpec.
		parts := strings.Split(name, ".")
		if len(parts) >= 2 {
			s.GoType = parts[len(parts)-2] + "." + parts[len(parts)-1]
		}
	}
	l.built[name] = s
	if name == quantityDef {
		l.quantities[s] = true
	}
	if name == rawExtensionDef {
		// Embedded objects (a ControllerRevision's data) are one value
		// to kube's field manager, not fields of their own.
		s.MapType = "atomic"
	}
	return s, nil
}

// node builds one schema node of the form gen/builtin writes.
func (l *linker) node(m map[string]any, path string) (*schema.Schema, error) {
	if ref, ok := m["$ref"].(string); ok {
		target, err := l.def(ref)
		if err != nil {
			return nil, err
		}
		desc, hasDesc := m["description"].(string)
		def, hasDef := m["default"]
		if !hasDesc && !hasDef {
			return target, nil
		}
		s := *target // the field's own description and default
		if hasDesc {
			s.Description = desc
		}
		if hasDef {
			s.Default = def
		}
		if ref == quantityDef {
			l.quantities[&s] = true
		}
		return &s, nil
	}
	s := &schema.Schema{}
	s.Type, _ = m["type"].(string)
	s.Format, _ = m["format"].(string)
	s.Description, _ = m["description"].(string)
	s.Default = m["default"]
	s.Required = stringsOf(m["required"])
	s.ListType, _ = m["x-kubernetes-list-type"].(string)
	s.ListMapKeys = stringsOf(m["x-kubernetes-list-map-keys"])
	s.MapType, _ = m["x-kubernetes-map-type"].(string)
	s.PatchStrategy, _ = m["x-kubernetes-patch-strategy"].(string)
	s.PatchMergeKey, _ = m["x-kubernetes-patch-merge-key"].(string)
	s.IntOrString, _ = m["x-kubernetes-int-or-string"].(bool)
	s.PreserveUnknownFields, _ = m["x-kubernetes-preserve-unknown-fields"].(bool)
	if props, ok := m["properties"].(map[string]any); ok {
		s.Properties = make(map[string]*schema.Schema, len(props))
		for name, p := range props {
			pm, _ := p.(map[string]any)
			ps, err := l.node(pm, path+"."+name)
			if err != nil {
				return nil, err
			}
			s.Properties[name] = ps
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		sub, ok := m[k].(map[string]any)
		if !ok {
			continue
		}
		ss, err := l.node(sub, path+"."+k)
		if err != nil {
			return nil, err
		}
		if k == "items" {
			s.Items = ss
		} else {
			s.AdditionalProperties = ss
		}
	}
	return s, nil
}

func stringsOf(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
