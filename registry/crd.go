package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/kapi-dev/kapi/patch"
	"github.com/kapi-dev/kapi/registry/request"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/storage"
)

// FromCRD returns a Resource for each served version of a
// CustomResourceDefinition (read with schema.ParseCRDs or schema.LoadCRDs),
// ready to Register: names, scope, schema, status and scale subresources,
// printer columns and selectable fields as the manifest declares them.
// The versions listed but not served are kept with them, never served
// (see unservedVersions): a managedFields entry of such a version is
// compared there, as kube's field manager does.
func FromCRD(crd schema.CRD) []*Resource {
	var out []*Resource
	var unserved *unservedVersions
	for _, v := range crd.Versions {
		if v.Served {
			continue
		}
		if unserved == nil {
			unserved = &unservedVersions{byVersion: map[string]*unservedVersion{}}
		}
		unserved.byVersion[v.Name] = &unservedVersion{res: crdResource(crd, v)}
	}
	for _, v := range crd.Versions {
		if !v.Served {
			continue
		}
		res := crdResource(crd, v)
		res.unserved = unserved
		out = append(out, res)
	}
	return out
}

// crdResource is the Resource of crd's version v.
func crdResource(crd schema.CRD, v schema.Version) *Resource {
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
	return res
}

// unservedVersions are the versions of a CRD listed in spec.versions
// with served: false, shared by the Resources of its served versions
// (nil when it has none). kube's CR converter converts to every version
// of spec.versions, served or not, and its field manager knows every
// version's schema, so a managedFields entry of an unserved version is
// compared there (ops.go's converter):
//
//	pairs v1beta1 (served: false), v1 (served, storage); p has an
//	entry of "a" at v1beta1 {spec: {size}}; PATCH at v1 by "b" sets
//	spec.size  →  p converted to v1beta1 (None: apiVersion rewritten,
//	pruned by v1beta1's schema), a's entry compared there and left
//	{spec: {}}; b gets {spec: {size}} at v1
//
// An object stored at an unserved version is defaulted by that
// version's schema before it is converted (defaultAtStoredVersion,
// through Resource.version), as kube's storage decoder, which knows
// every version's schema, does.
//
// Their Resources are never registered or served; each one's field
// manager is built the first time a write needs it (most CRDs never
// have a manager at an unserved version), once per FromCRD call, that
// is once per CRD change. A version removed from spec.versions is in
// none: the converter's "invalid group/version" error, as kube's.
type unservedVersions struct {
	byVersion map[string]*unservedVersion // by version name; never changed after FromCRD
}

type unservedVersion struct {
	once sync.Once
	res  *Resource // its manager set by once
	err  error
}

// resource is the prepared Resource of the unserved version v, or nil
// when u has no such version.
func (u *unservedVersions) resource(v string) (*Resource, error) {
	if u == nil {
		return nil, nil
	}
	x := u.byVersion[v]
	if x == nil {
		return nil, nil
	}
	x.once.Do(func() {
		res := x.res
		fm, err := patch.NewFieldManager(mergeSchema(res.Schema), res.GroupVersion(), patch.FieldManagerOptions{Kind: res.Kind, ResetFields: res.resetFields()})
		if err != nil {
			x.err = fmt.Errorf("registry: resource %s: %w", res.qualified(), err)
			return
		}
		res.manager = fm
		res.defaults = factsOf(res.Schema).defaults // an object stored at v is defaulted by v's schema
	})
	if x.err != nil {
		return nil, x.err
	}
	return x.res, nil
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
