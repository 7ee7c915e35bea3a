package schema

// ApplyDefaults fills the defaults of s into obj in place, as kube's structural
// defaulting does for custom resources: a property that is missing, or
// null where the property is not nullable, gets a copy of its default; an
// additionalProperties value or an array item that is null where not
// nullable gets a copy of the default of additionalProperties or items
// (null when there is none); then Default descends into every value the
// schema describes, including the defaults just set. Values of a kind
// other than s expects are left alone (validation reports them).
// (It is not named Default: that is the field holding a node's default.)
//
//	s: {type: object, properties: {replicas: {type: integer, default: 1}}}
//	{"replicas": null}  →  {"replicas": 1}
//	{}                  →  {"replicas": 1}
func (s *Schema) ApplyDefaults(obj any) {
	if s == nil {
		return
	}
	switch x := obj.(type) {
	case map[string]any:
		for k, p := range s.Properties {
			if p == nil || p.Default == nil {
				continue
			}
			if v, ok := x[k]; !ok || v == nil && !p.Nullable {
				x[k] = copyValue(p.Default)
			}
		}
		for k, v := range x {
			if p, ok := s.Properties[k]; ok {
				p.ApplyDefaults(v)
			} else if ap := s.AdditionalProperties; ap != nil {
				if v == nil && !ap.Nullable {
					x[k] = copyValue(ap.Default)
				}
				ap.ApplyDefaults(x[k])
			}
		}
	case []any:
		it := s.Items
		for i, v := range x {
			if v == nil && it != nil && !it.Nullable {
				x[i] = copyValue(it.Default)
			}
			it.ApplyDefaults(x[i])
		}
	}
}
