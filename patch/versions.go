package patch

import (
	"errors"
	"fmt"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// Managers at other versions. managedFields entries keep the apiVersion
// of the write that made them, and their field sets are paths in that
// version's schema. kube's field manager compares a write at each
// manager's version (structured-merge-diff's merge.Converter converts the
// old and new objects there), so a field renamed or restructured between
// versions is taken from the manager that holds it under its own name.
// An HPA created at autoscaling/v2 with a Pods metric, then updated at
// autoscaling/v1 (targetCPUUtilizationPercentage: 75):
//
//	v2 manager before:  {spec: {metrics, minReplicas, scaleTargetRef: {apiVersion, kind, name}}}
//	compared at v1:     the v1 object has no metrics, and v1's scaleTargetRef is atomic
//	compared at v2:     metrics changed (a CPU metric added) → taken from the v2 manager
//	v2 manager after:   {spec: {minReplicas, scaleTargetRef: {apiVersion, kind, name}}}
//
// Without a ConvertFunc (UpdateOptions.Convert, ApplyOptions.Convert nil)
// every version is read as the field manager's own (the identity
// conversion). With one, only managers at another version cost a
// conversion: a write whose managers are all at its own version never
// calls it. Per other version, a write converts live twice (to reconcile
// and to compare) and the new object once, and an apply by a manager
// whose last apply was at another version converts again to prune, as
// structured-merge-diff does: with a CRD's conversion webhook, that many
// webhook calls, as kube makes.

// ConvertFunc converts obj, an object of the field manager's resource in
// JSON form (numbers json.Number; the function may modify it, it is a
// copy), to apiVersion, and returns it with the field manager of that
// version, whose schema types the result. An error wrapping
// ErrMissingVersion says the resource has no such version (kube's
// IsMissingVersionError: not registered, or no type for it): the
// managers at that version are dropped, as kube drops them. Any other
// error fails the write's tracking (Update keeps live's managedFields,
// Apply answers a *ConversionError), as kube's does.
type ConvertFunc func(obj map[string]any, apiVersion string) (map[string]any, *FieldManager, error)

// ErrMissingVersion is the class of a ConvertFunc's error for a version
// the resource does not have.
var ErrMissingVersion = errors.New("patch: no such version")

// ConversionError is how Apply reports a ConvertFunc's failure (other
// than ErrMissingVersion): Msg says where it failed, Err is the
// ConvertFunc's error, for the caller to answer as its own (kube answers
// a failed conversion webhook with 500).
type ConversionError struct {
	Msg string
	Err error
}

func (e *ConversionError) Error() string { return e.Msg }

// Unwrap returns the ConvertFunc's error.
func (e *ConversionError) Unwrap() error { return e.Err }

// versions converts one write's typed objects to other apiVersions with
// a ConvertFunc. A nil *versions is the identity.
type versions struct {
	convert ConvertFunc
	sub     string // the write's subresource, whose reset fields each version's updater has
	// live and obj are the write's old and new objects, for diff.
	live, obj *typed.TypedValue
}

// at converts tv to version v, returning it typed in v's schema with v's
// updater for the write's subresource; missing reports ErrMissingVersion.
// An object already at v (its apiVersion says so) is returned as it is,
// as kube's converter does (no webhook call), with u only for u's own
// version (nil otherwise: callers that need it convert from another).
func (vs *versions) at(tv *typed.TypedValue, v fieldpath.APIVersion, own *updater) (out *typed.TypedValue, u *updater, missing bool, err error) {
	m, _ := tv.AsValue().Unstructured().(map[string]any)
	if av, _ := m["apiVersion"].(string); av == string(v) {
		if v == own.version {
			return tv, own, false, nil
		}
		return tv, nil, false, nil
	}
	in, _ := fromSMD(toSMD(m)).(map[string]any)
	if in == nil {
		return nil, nil, false, fmt.Errorf("the object is not an object")
	}
	conv, fm, err := vs.convert(in, string(v))
	if errors.Is(err, ErrMissingVersion) {
		return nil, nil, true, nil
	}
	if err != nil {
		return nil, nil, false, &ConversionError{Msg: err.Error(), Err: err}
	}
	if fm == nil {
		return nil, nil, false, fmt.Errorf("no field manager for %s", v)
	}
	out, err = fm.typ.FromUnstructured(toSMD(conv))
	if err != nil {
		return nil, nil, false, err
	}
	return out, fm.updater(vs.sub), false, nil
}

// otherVersion reports whether a manager of mg is at another version than
// apiVersion.
func (mg *managed) otherVersion(apiVersion string) bool {
	for _, s := range mg.fields {
		if string(s.APIVersion()) != apiVersion {
			return true
		}
	}
	return false
}

// other reports whether a manager of managers, or last, is at a version
// other than u's, which vs (non-nil) converts for.
func (vs *versions) other(u *updater, managers fieldpath.ManagedFields, last fieldpath.VersionedSet) bool {
	if vs == nil {
		return false
	}
	if last != nil && last.APIVersion() != u.version {
		return true
	}
	for _, s := range managers {
		if s.APIVersion() != u.version {
			return true
		}
	}
	return false
}

// reconcileAt is reconcile's step for a manager at another version:
// its set reconciled with live converted there; drop reports a missing
// version.
func (u *updater) reconcileAt(vs *versions, live *typed.TypedValue, set fieldpath.VersionedSet) (out fieldpath.VersionedSet, drop bool, err error) {
	tv, _, missing, err := vs.at(live, set.APIVersion(), u)
	if missing {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	r, err := typed.ReconcileFieldSetWithSchema(set.Set(), tv)
	if err != nil {
		return nil, false, err
	}
	if r == nil {
		return set, false, nil
	}
	return fieldpath.NewVersionedSet(r, set.APIVersion(), set.Applied()), false, nil
}

// compareAt is diff's comparison at another version: the write's objects
// converted there and compared, filtered by that version's reset fields;
// nil, nil for a missing version.
func (u *updater) compareAt(vs *versions, v fieldpath.APIVersion) (*typed.Comparison, error) {
	old, ou, missing, err := vs.at(vs.live, v, u)
	if missing {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to convert old object: %w", err)
	}
	obj, _, missing, err := vs.at(vs.obj, v, u)
	if missing {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to convert new object: %w", err)
	}
	c, err := old.Compare(obj)
	if err != nil {
		return nil, fmt.Errorf("failed to compare objects: %w", err)
	}
	if ou != nil && ou.filter != nil {
		c = &typed.Comparison{Removed: ou.filter.Filter(c.Removed), Modified: ou.filter.Filter(c.Modified), Added: ou.filter.Filter(c.Added)}
	}
	return c, nil
}

// pruneVersions is merge.Updater's prune as smd has it, converting at
// every step: the merged object is pruned at the version of the applier's
// last apply, owned items are added back at every manager's version, and
// the result is converted back to u's version.
func (u *updater) pruneVersions(vs *versions, merged *typed.TypedValue, managers fieldpath.ManagedFields, last fieldpath.VersionedSet) (*typed.TypedValue, error) {
	version := last.APIVersion()
	cm, _, missing, err := vs.at(merged, version, u)
	if missing {
		return merged, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to convert merged object to last applied version: %w", err)
	}
	sc, tr := cm.Schema(), cm.TypeRef()
	pruned := cm.RemoveItems(last.Set().EnsureNamedFieldsAreMembers(sc, tr))

	// addBackOwnedItems
	byVersion := map[fieldpath.APIVersion]*fieldpath.Set{}
	for _, s := range managers {
		if b, ok := byVersion[s.APIVersion()]; ok {
			byVersion[s.APIVersion()] = b.Union(s.Set())
		} else {
			byVersion[s.APIVersion()] = s.Set()
		}
	}
	m := cm
	addBack := func(v fieldpath.APIVersion, managed *fieldpath.Set) error {
		mv, _, missing, err := vs.at(m, v, u)
		if missing {
			return nil
		}
		if err != nil {
			return fmt.Errorf("failed to convert merged object at version %v: %w", v, err)
		}
		pv, _, missing, err := vs.at(pruned, v, u)
		if missing {
			return nil
		}
		if err != nil {
			return fmt.Errorf("failed to convert pruned object at version %v: %w", v, err)
		}
		ms, err := mv.ToFieldSet()
		if err != nil {
			return fmt.Errorf("failed to create field set from merged object at version %v: %w", v, err)
		}
		ps, err := pv.ToFieldSet()
		if err != nil {
			return fmt.Errorf("failed to create field set from pruned object at version %v: %w", v, err)
		}
		sc, tr := mv.Schema(), mv.TypeRef()
		m = mv
		pruned = mv.RemoveItems(ms.EnsureNamedFieldsAreMembers(sc, tr).Difference(ps.EnsureNamedFieldsAreMembers(sc, tr).Union(managed.EnsureNamedFieldsAreMembers(sc, tr))))
		return nil
	}
	if managed, ok := byVersion[version]; ok {
		if err := addBack(version, managed); err != nil {
			return nil, fmt.Errorf("failed add back owned items: %w", err)
		}
		delete(byVersion, version)
	}
	for v, managed := range byVersion {
		if err := addBack(v, managed); err != nil {
			return nil, fmt.Errorf("failed add back owned items: %w", err)
		}
	}

	// addBackDanglingItems, with the merged object at the last applied
	// version
	pl, _, missing, err := vs.at(pruned, version, u)
	if missing {
		pruned = cm
	} else {
		if err != nil {
			return nil, fmt.Errorf("failed add back dangling items: failed to convert pruned object to last applied version: %w", err)
		}
		ps, err := pl.ToFieldSet()
		if err != nil {
			return nil, fmt.Errorf("failed add back dangling items: failed to create field set from pruned object in last applied version: %w", err)
		}
		ms, err := cm.ToFieldSet()
		if err != nil {
			return nil, fmt.Errorf("failed add back dangling items: failed to create field set from merged object in last applied version: %w", err)
		}
		ps, ms = ps.EnsureNamedFieldsAreMembers(sc, tr), ms.EnsureNamedFieldsAreMembers(sc, tr)
		pruned = cm.RemoveItems(ms.Difference(ps).Intersection(last.Set().EnsureNamedFieldsAreMembers(sc, tr)))
	}
	out, _, missing, err := vs.at(pruned, u.version, u)
	if missing {
		return nil, fmt.Errorf("failed to convert pruned object to %v: no such version", u.version)
	}
	if err != nil {
		return nil, fmt.Errorf("failed to convert pruned object to %v: %w", u.version, err)
	}
	return out, nil
}
