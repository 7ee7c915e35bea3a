package registry

import "github.com/kapi-dev/kapi/schema"

// FromCRD returns a Resource for each served version of a
// CustomResourceDefinition (read with schema.ParseCRDs or schema.LoadCRDs),
// ready to Register: names, scope, schema, status and scale subresources,
// printer columns and selectable fields as the manifest declares them.
func FromCRD(crd schema.CRD) []*Resource {
	var out []*Resource
	for _, v := range crd.Versions {
		if !v.Served {
			continue
		}
		res := &Resource{
			Group: crd.Group, Version: v.Name, Kind: crd.Names.Kind,
			Plural: crd.Names.Plural, Singular: crd.Names.Singular,
			ShortNames: crd.Names.ShortNames, Categories: crd.Names.Categories,
			Namespaced: crd.Namespaced, Status: v.Status, Generation: true, RequireResourceVersion: true, Custom: true,
			SelectableFields: v.SelectableFields,
			Schema:           v.Schema,
		}
		if s := v.Scale; s != nil {
			res.Scale = &Scale{SpecReplicasPath: s.SpecReplicasPath, StatusReplicasPath: s.StatusReplicasPath, LabelSelectorPath: s.LabelSelectorPath}
		}
		for _, c := range v.Columns {
			res.Columns = append(res.Columns, Column{Name: c.Name, Type: c.Type, Format: c.Format, Description: c.Description, Priority: c.Priority, JSONPath: c.JSONPath})
		}
		out = append(out, res)
	}
	return out
}
