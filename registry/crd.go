package registry

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kapi-dev/kapi/registry/request"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/storage"
)

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

// CRDObject is crd as an apiextensions.k8s.io/v1 CustomResourceDefinition
// object, as InstallCRDs creates it.
func CRDObject(crd schema.CRD) map[string]any {
	scope := "Cluster"
	if crd.Namespaced {
		scope = "Namespaced"
	}
	names := map[string]any{"plural": crd.Names.Plural, "kind": crd.Names.Kind}
	for k, v := range map[string]string{"singular": crd.Names.Singular, "listKind": crd.Names.ListKind} {
		if v != "" {
			names[k] = v
		}
	}
	for k, v := range map[string][]string{"shortNames": crd.Names.ShortNames, "categories": crd.Names.Categories} {
		if len(v) > 0 {
			names[k] = anyList(v)
		}
	}
	versions := make([]any, len(crd.Versions))
	for i, v := range crd.Versions {
		m := map[string]any{"name": v.Name, "served": v.Served, "storage": v.Storage,
			"schema": map[string]any{"openAPIV3Schema": v.Schema.JSON()}}
		if v.Deprecated {
			m["deprecated"] = true
		}
		sub := map[string]any{}
		if v.Status {
			sub["status"] = map[string]any{}
		}
		if s := v.Scale; s != nil {
			sc := map[string]any{"specReplicasPath": s.SpecReplicasPath, "statusReplicasPath": s.StatusReplicasPath}
			if s.LabelSelectorPath != "" {
				sc["labelSelectorPath"] = s.LabelSelectorPath
			}
			sub["scale"] = sc
		}
		if len(sub) > 0 {
			m["subresources"] = sub
		}
		if len(v.Columns) > 0 {
			cols := make([]any, len(v.Columns))
			for j, c := range v.Columns {
				col := map[string]any{"name": c.Name, "type": c.Type, "jsonPath": c.JSONPath}
				if c.Format != "" {
					col["format"] = c.Format
				}
				if c.Description != "" {
					col["description"] = c.Description
				}
				if c.Priority != 0 {
					col["priority"] = int64(c.Priority)
				}
				cols[j] = col
			}
			m["additionalPrinterColumns"] = cols
		}
		if len(v.SelectableFields) > 0 {
			fs := make([]any, len(v.SelectableFields))
			for j, f := range v.SelectableFields {
				fs[j] = map[string]any{"jsonPath": "." + f}
			}
			m["selectableFields"] = fs
		}
		versions[i] = m
	}
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": crd.Name},
		"spec":     map[string]any{"group": crd.Group, "names": names, "scope": scope, "versions": versions},
	}
}

func anyList(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

// InstallCRDs creates each CRD through the API (the write path any
// client's create takes: validation, the CRD feed), or updates its spec
// when it exists, and returns once their kinds are served. An invalid
// CRD is a *StatusError (422, kube's causes); one whose names another CRD
// holds is an error quoting its NamesAccepted condition.
//
//	crds, err := schema.LoadCRDs("config/crd/bases")
//	…
//	err = reg.InstallCRDs(ctx, crds...)
func (r *Registry) InstallCRDs(ctx context.Context, crds ...schema.CRD) error {
	if r.crds == nil {
		return fmt.Errorf("registry: InstallCRDs: CustomResourceDefinitions are disabled (Options.DisableCustomResourceDefinitions)")
	}
	ctx = request.WithUser(ctx, apiserverUser)
	for _, crd := range crds {
		obj := Object(CRDObject(crd))
		_, err := r.create(ctx, r.crds.res, "", obj, writeOptions{manager: "kapi"})
		if storage.IsExists(err) {
			_, err = r.crds.update(ctx, crd.Name, "", func(old Object) (Object, error) {
				next := old.deepCopy()
				next["spec"] = obj["spec"]
				return next, nil
			})
		}
		if err != nil {
			return toStatus(err, r.crds.res, crd.Name)
		}
		cur, err := r.get(ctx, r.crds.res, "", crd.Name, storage.GetOptions{})
		if err != nil {
			return err
		}
		var c crdObject
		if err := json.Unmarshal(cur.Value, &c); err != nil {
			return err
		}
		if cond := c.Status.condition(condNamesAccepted); cond == nil || cond.Status != condTrue {
			msg := "not handled yet"
			if cond != nil {
				msg = cond.Reason + ": " + cond.Message
			}
			return fmt.Errorf("registry: CustomResourceDefinition %s is stored but not served: %s", crd.Name, msg)
		}
	}
	return nil
}
