package schema

// JSON returns s in its OpenAPI v3 JSON form (the JSONSchemaProps form of
// a CRD's openAPIV3Schema), as /openapi/v3 and kubectl explain read it:
// maps of string keys, []any lists, strings, booleans, int64 for the
// length and count bounds, float64 for minimum, maximum and multipleOf,
// and default, enum and example values copied as they are held. The
// extensions appear under their x-kubernetes names, the patch hints as
// x-kubernetes-patch-strategy and x-kubernetes-patch-merge-key. Zero
// fields are left out, so a nil or zero Schema is {}.
//
// Worked example:
//
//	Schema{Type: "array", Items: &Schema{Type: "string"}, Ext: Ext{ListType: "set", PatchStrategy: "merge"}}
//
// is
//
//	{"type": "array", "items": {"type": "string"},
//	 "x-kubernetes-list-type": "set", "x-kubernetes-patch-strategy": "merge"}
//
// Parse (or FromJSON) of the result gives back a Schema equal to s when s
// passes FromJSON's checks.
func (s *Schema) JSON() map[string]any {
	m := map[string]any{}
	if s == nil {
		return m
	}
	str := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	flag := func(k string, v bool) {
		if v {
			m[k] = true
		}
	}
	integer := func(k string, v *int64) {
		if v != nil {
			m[k] = *v
		}
	}
	number := func(k string, v *float64) {
		if v != nil {
			m[k] = *v
		}
	}
	list := func(k string, l []*Schema) {
		if len(l) == 0 {
			return
		}
		out := make([]any, len(l))
		for i, e := range l {
			out[i] = e.JSON()
		}
		m[k] = out
	}
	strs := func(k string, l []string) {
		if len(l) == 0 {
			return
		}
		out := make([]any, len(l))
		for i, e := range l {
			out[i] = e
		}
		m[k] = out
	}

	str("type", s.Type)
	str("format", s.Format)
	str("title", s.Title)
	str("description", s.Description)
	flag("nullable", s.Nullable)
	if s.Default != nil {
		m["default"] = copyValue(s.Default)
	}
	if s.Example != nil {
		m["example"] = copyValue(s.Example)
	}
	if len(s.Properties) > 0 {
		p := make(map[string]any, len(s.Properties))
		for k, v := range s.Properties {
			p[k] = v.JSON()
		}
		m["properties"] = p
	}
	if s.AdditionalProperties != nil {
		m["additionalProperties"] = s.AdditionalProperties.JSON()
	}
	strs("required", s.Required)
	if s.Items != nil {
		m["items"] = s.Items.JSON()
	}
	if len(s.Enum) > 0 {
		m["enum"] = copyValue(s.Enum)
	}
	str("pattern", s.Pattern)
	integer("minLength", s.MinLength)
	integer("maxLength", s.MaxLength)
	integer("minItems", s.MinItems)
	integer("maxItems", s.MaxItems)
	integer("minProperties", s.MinProperties)
	integer("maxProperties", s.MaxProperties)
	number("minimum", s.Minimum)
	number("maximum", s.Maximum)
	flag("exclusiveMinimum", s.ExclusiveMinimum)
	flag("exclusiveMaximum", s.ExclusiveMaximum)
	number("multipleOf", s.MultipleOf)
	flag("uniqueItems", s.UniqueItems)
	list("allOf", s.AllOf)
	list("anyOf", s.AnyOf)
	list("oneOf", s.OneOf)
	if s.Not != nil {
		m["not"] = s.Not.JSON()
	}

	flag("x-kubernetes-preserve-unknown-fields", s.PreserveUnknownFields)
	flag("x-kubernetes-embedded-resource", s.EmbeddedResource)
	flag("x-kubernetes-int-or-string", s.IntOrString)
	str("x-kubernetes-list-type", s.ListType)
	strs("x-kubernetes-list-map-keys", s.ListMapKeys)
	str("x-kubernetes-map-type", s.MapType)
	if len(s.Validations) > 0 {
		l := make([]any, len(s.Validations))
		for i, r := range s.Validations {
			e := map[string]any{"rule": r.Rule}
			for k, v := range map[string]string{"message": r.Message, "messageExpression": r.MessageExpression, "fieldPath": r.FieldPath, "reason": r.Reason} {
				if v != "" {
					e[k] = v
				}
			}
			if r.OptionalOldSelf != nil {
				e["optionalOldSelf"] = *r.OptionalOldSelf
			}
			l[i] = e
		}
		m["x-kubernetes-validations"] = l
	}
	str("x-kubernetes-patch-strategy", s.PatchStrategy)
	str("x-kubernetes-patch-merge-key", s.PatchMergeKey)
	return m
}
