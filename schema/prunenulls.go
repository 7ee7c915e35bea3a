package schema

// PruneNulls removes from obj, in place, every null whose schema is not
// nullable and has no default, as kube does to a custom resource's body
// before validating it (its decoder's PruneNonNullableNullsWithoutDefaults):
// what a Go struct's decoder would leave unset. A field the schema does
// not specify (below x-kubernetes-preserve-unknown-fields) keeps its
// null; so does a list item (removing it would shift the list).
//
//	s: {properties: {spec: {properties: {a: {type: string}, b: {type: string, nullable: true}}}}}
//	{"spec": {"a": null, "b": null}}  →  {"spec": {"b": null}}
//	{"spec": null}                    →  {}
func (s *Schema) PruneNulls(obj any) {
	switch x := obj.(type) {
	case map[string]any:
		for k, v := range x {
			sub := s.field(k)
			if v == nil && sub != nil && !sub.Nullable && sub.Default == nil {
				delete(x, k)
				continue
			}
			sub.PruneNulls(v)
		}
	case []any:
		var items *Schema
		if s != nil {
			items = s.Items
		}
		for _, e := range x {
			items.PruneNulls(e)
		}
	}
}

// field is the schema of an object's field k: its property, else its
// additionalProperties; nil when s says nothing of it.
func (s *Schema) field(k string) *Schema {
	if s == nil {
		return nil
	}
	if p, ok := s.Properties[k]; ok {
		return p
	}
	return s.AdditionalProperties
}
