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
	p.prune(obj, &root)
	slices.Sort(p.removed)
	return p.removed
}

var metaFields = map[string]bool{"apiVersion": true, "kind": true, "metadata": true}

// pruner walks an object with the path of the value it is at in path,
// whose string is made only for the fields it removes.
type pruner struct {
	removed []string
	path    []byte
}

// key appends k to the path (child's form) and returns the length to
// restore it to.
func (p *pruner) key(k string) int {
	n := len(p.path)
	if n > 0 {
		p.path = append(p.path, '.')
	}
	p.path = append(p.path, k...)
	return n
}

// index appends [i] to the path and returns the length to restore it to.
func (p *pruner) index(i int) int {
	n := len(p.path)
	p.path = append(p.path, '[')
	p.path = strconv.AppendInt(p.path, int64(i), 10)
	p.path = append(p.path, ']')
	return n
}

// remove records the removal of field k of the object at the path.
func (p *pruner) remove(k string) {
	n := p.key(k)
	p.removed = append(p.removed, string(p.path))
	p.path = p.path[:n]
}

func (p *pruner) prune(x any, s *Schema) {
	if s != nil && s.PreserveUnknownFields {
		p.skip(x, s)
		return
	}
	switch t := x.(type) {
	case map[string]any:
		if s == nil {
			for k := range t {
				p.remove(k)
				delete(t, k)
			}
			return
		}
		for k, v := range t {
			if s.EmbeddedResource && metaFields[k] {
				continue
			}
			if sub, ok := s.Properties[k]; ok {
				n := p.key(k)
				p.prune(v, sub)
				p.path = p.path[:n]
			} else if s.AdditionalProperties != nil {
				n := p.key(k)
				p.prune(v, s.AdditionalProperties)
				p.path = p.path[:n]
			} else {
				if !metaFields[k] || len(p.path) > 0 {
					p.remove(k)
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
			n := p.index(i)
			p.prune(v, items)
			p.path = p.path[:n]
		}
	}
}

// skip is pruning below x-kubernetes-preserve-unknown-fields: unknown
// fields stay, specified ones are pruned by their schemas.
func (p *pruner) skip(x any, s *Schema) {
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
				n := p.key(k)
				p.prune(v, sub)
				p.path = p.path[:n]
			} else if s.AdditionalProperties != nil {
				n := p.key(k)
				p.prune(v, s.AdditionalProperties)
				p.path = p.path[:n]
			}
		}
	case []any:
		for i, v := range t {
			n := p.index(i)
			p.skip(v, s.Items)
			p.path = p.path[:n]
		}
	}
}
