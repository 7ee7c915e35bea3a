package schema

import (
	"slices"
	"strconv"
)

// Prune removes from obj, in place, every field s does not specify, as
// kube's structural pruning does for a custom resource, and returns the
// paths of the removed fields, sorted, in the form of kube's "unknown
// field" warnings: "spec.foo", "spec.items[0].bar". obj is a whole
// object: its apiVersion, kind and metadata are kept and not descended
// into (metadata has its own rules), as are those of every
// x-kubernetes-embedded-resource value. Below x-kubernetes-preserve-unknown-fields
// unknown fields are kept, but the fields the schema does specify are
// still pruned.
//
//	s: {type: object, properties: {spec: {type: object, properties: {a: {type: string}}}}}
//	{"kind": "W", "spec": {"a": "x", "b": 1}, "foo": 2}  →  {"kind": "W", "spec": {"a": "x"}}, ["foo", "spec.b"]
func (s *Schema) Prune(obj any) []string {
	root := Schema{}
	if s != nil {
		root = *s
	}
	root.EmbeddedResource = true
	var p pruner
	p.prune(obj, &root, "")
	slices.Sort(p.removed)
	return p.removed
}

var metaFields = map[string]bool{"apiVersion": true, "kind": true, "metadata": true}

type pruner struct{ removed []string }

func pathKey(path, k string) string { return child(path, k) }

func pathIndex(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

func (p *pruner) prune(x any, s *Schema, path string) {
	if s != nil && s.PreserveUnknownFields {
		p.skip(x, s, path)
		return
	}
	switch t := x.(type) {
	case map[string]any:
		if s == nil {
			for k := range t {
				p.removed = append(p.removed, pathKey(path, k))
				delete(t, k)
			}
			return
		}
		for k, v := range t {
			if s.EmbeddedResource && metaFields[k] {
				continue
			}
			if sub, ok := s.Properties[k]; ok {
				p.prune(v, sub, pathKey(path, k))
			} else if s.AdditionalProperties != nil {
				p.prune(v, s.AdditionalProperties, pathKey(path, k))
			} else {
				if !metaFields[k] || path != "" {
					p.removed = append(p.removed, pathKey(path, k))
				}
				delete(t, k)
			}
		}
	case []any:
		var items *Schema
		if s != nil {
			items = s.Items
		}
		for i, v := range t {
			p.prune(v, items, pathIndex(path, i))
		}
	}
}

// skip is pruning below x-kubernetes-preserve-unknown-fields: unknown
// fields stay, specified ones are pruned by their schemas.
func (p *pruner) skip(x any, s *Schema, path string) {
	if s == nil {
		return
	}
	switch t := x.(type) {
	case map[string]any:
		for k, v := range t {
			if s.EmbeddedResource && metaFields[k] {
				continue
			}
			if sub, ok := s.Properties[k]; ok {
				p.prune(v, sub, pathKey(path, k))
			} else if s.AdditionalProperties != nil {
				p.prune(v, s.AdditionalProperties, pathKey(path, k))
			}
		}
	case []any:
		for i, v := range t {
			p.skip(v, s.Items, pathIndex(path, i))
		}
	}
}
