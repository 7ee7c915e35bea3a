package patch

import (
	"fmt"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/merge"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// updater is structured-merge-diff's merge.Updater for a field manager
// that knows one version and reads every other apiVersion with it (its
// Converter is the identity), step for step and with the same results and
// error messages, minus the work the identity makes redundant: smd
// converts, compares and collects field sets once per version and per
// pruning step, where one walk serves them all here.
type updater struct {
	version fieldpath.APIVersion
	filter  fieldpath.Filter // the subresource's reset fields; nil: none
}

// filterFor is IgnoreFilter[v]: only the manager's own version has one.
func (u *updater) filterFor(v fieldpath.APIVersion) fieldpath.Filter {
	if v == u.version {
		return u.filter
	}
	return nil
}

// reconcile is reconcileManagedFieldsWithSchemaChanges: it returns a new
// map, so managers is not modified.
func (u *updater) reconcile(live *typed.TypedValue, managers fieldpath.ManagedFields) (fieldpath.ManagedFields, error) {
	out := make(fieldpath.ManagedFields, len(managers))
	for id, vs := range managers {
		set, err := typed.ReconcileFieldSetWithSchema(vs.Set(), live)
		if err != nil {
			return nil, err
		}
		if set != nil {
			vs = fieldpath.NewVersionedSet(set, vs.APIVersion(), vs.Applied())
		}
		out[id] = vs
	}
	return out, nil
}

// diff is merge.Updater's update: it takes the fields live → obj changed
// from every manager but workflow (an error with the conflicts unless
// force). One comparison serves every version; smd compares again per
// version (with the identity conversion, the same walk).
func (u *updater) diff(live, obj *typed.TypedValue, managers fieldpath.ManagedFields, workflow string, force bool) (fieldpath.ManagedFields, *typed.Comparison, error) {
	raw, err := live.Compare(obj)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to compare objects: %v", err)
	}
	versions := map[fieldpath.APIVersion]*typed.Comparison{}
	compareAt := func(v fieldpath.APIVersion) *typed.Comparison {
		if c, ok := versions[v]; ok {
			return c
		}
		c := raw
		if f := u.filterFor(v); f != nil {
			c = &typed.Comparison{Removed: f.Filter(raw.Removed), Modified: f.Filter(raw.Modified), Added: f.Filter(raw.Added)}
		}
		versions[v] = c
		return c
	}
	compare := compareAt(u.version)
	conflicts := fieldpath.ManagedFields{}
	removed := fieldpath.ManagedFields{}
	for id, vs := range managers {
		if id == workflow {
			continue
		}
		c := compareAt(vs.APIVersion())
		if set := vs.Set().Intersection(c.Modified.Union(c.Added)); !set.Empty() {
			conflicts[id] = fieldpath.NewVersionedSet(set, vs.APIVersion(), false)
		}
		if !c.Removed.Empty() {
			removed[id] = fieldpath.NewVersionedSet(c.Removed, vs.APIVersion(), false)
		}
	}
	if !force && len(conflicts) != 0 {
		return nil, nil, merge.ConflictsFromManagers(conflicts)
	}
	for _, sets := range []fieldpath.ManagedFields{conflicts, removed} {
		for id, s := range sets {
			vs := managers[id]
			managers[id] = fieldpath.NewVersionedSet(vs.Set().Difference(s.Set()), vs.APIVersion(), vs.Applied())
		}
	}
	for id, vs := range managers {
		if vs.Set().Empty() {
			delete(managers, id)
		}
	}
	return managers, compare, nil
}

// update is merge.Updater.Update.
func (u *updater) update(live, obj *typed.TypedValue, managers fieldpath.ManagedFields, manager string) (fieldpath.ManagedFields, error) {
	managers, err := u.reconcile(live, managers)
	if err != nil {
		return nil, err
	}
	managers, compare, err := u.diff(live, obj, managers, manager, true)
	if err != nil {
		return nil, err
	}
	own := fieldpath.NewSet()
	if vs, ok := managers[manager]; ok {
		own = vs.Set()
	}
	set := own.Difference(compare.Removed).Union(compare.Modified).Union(compare.Added)
	if u.filter != nil {
		set = u.filter.Filter(set)
	}
	if set.Empty() {
		delete(managers, manager)
	} else {
		managers[manager] = fieldpath.NewVersionedSet(set, u.version, false)
	}
	return managers, nil
}

// apply is merge.Updater.Apply: it returns the merged object, or nil when
// it equals live.
func (u *updater) apply(live, config *typed.TypedValue, managers fieldpath.ManagedFields, manager string, force bool) (*typed.TypedValue, fieldpath.ManagedFields, error) {
	managers, err := u.reconcile(live, managers)
	if err != nil {
		return nil, nil, err
	}
	merged, err := live.Merge(config)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to merge config: %v", err)
	}
	last := managers[manager]
	set, err := config.ToFieldSet()
	if err != nil {
		return nil, nil, fmt.Errorf("failed to get field set: %v", err)
	}
	if u.filter != nil {
		set = u.filter.Filter(set)
	}
	managers[manager] = fieldpath.NewVersionedSet(set, u.version, true)
	if merged, err = u.prune(merged, managers, last); err != nil {
		return nil, nil, fmt.Errorf("failed to prune fields: %v", err)
	}
	if managers, _, err = u.diff(live, merged, managers, manager, force); err != nil {
		return nil, nil, err
	}
	if value.EqualsUsing(value.NewFreelistAllocator(), live.AsValue(), merged.AsValue()) {
		merged = nil
	}
	return merged, managers, nil
}

// prune is merge.Updater's prune with its addBackOwnedItems and
// addBackDanglingItems: it removes what the applier applied last time and
// not this time, unless another manager owns it. The merged object's
// field set is collected once (smd collects it once per version and again
// for the dangling items), and each set gets its named fields once.
func (u *updater) prune(merged *typed.TypedValue, managers fieldpath.ManagedFields, last fieldpath.VersionedSet) (*typed.TypedValue, error) {
	if last == nil || last.Set().Empty() {
		return merged, nil
	}
	sc, tr := merged.Schema(), merged.TypeRef()
	lastSet := last.Set().EnsureNamedFieldsAreMembers(sc, tr)
	pruned := merged.RemoveItems(lastSet)

	// addBackOwnedItems: the pruned version first, then the others.
	byVersion := map[fieldpath.APIVersion]*fieldpath.Set{}
	for _, vs := range managers {
		if s, ok := byVersion[vs.APIVersion()]; ok {
			byVersion[vs.APIVersion()] = s.Union(vs.Set())
		} else {
			byVersion[vs.APIVersion()] = fieldpath.NewSet().Union(vs.Set())
		}
	}
	var mergedSet *fieldpath.Set
	mergedErr := error(nil)
	mergedSetAt := func(v fieldpath.APIVersion) (*fieldpath.Set, error) {
		if mergedSet == nil && mergedErr == nil {
			s, err := merged.ToFieldSet()
			if err != nil {
				mergedErr = err
			} else {
				mergedSet = s.EnsureNamedFieldsAreMembers(sc, tr)
			}
		}
		if mergedErr != nil {
			return nil, fmt.Errorf("failed to create field set from merged object at version %v: %v", v, mergedErr)
		}
		return mergedSet, nil
	}
	addBack := func(v fieldpath.APIVersion, managed *fieldpath.Set) error {
		ms, err := mergedSetAt(v)
		if err != nil {
			return err
		}
		ps, err := pruned.ToFieldSet()
		if err != nil {
			return fmt.Errorf("failed to create field set from pruned object at version %v: %v", v, err)
		}
		pruned = merged.RemoveItems(ms.Difference(ps.EnsureNamedFieldsAreMembers(sc, tr).Union(managed.EnsureNamedFieldsAreMembers(sc, tr))))
		return nil
	}
	if managed, ok := byVersion[last.APIVersion()]; ok {
		if err := addBack(last.APIVersion(), managed); err != nil {
			return nil, fmt.Errorf("failed add back owned items: %v", err)
		}
		delete(byVersion, last.APIVersion())
	}
	for v, managed := range byVersion {
		if err := addBack(v, managed); err != nil {
			return nil, fmt.Errorf("failed add back owned items: %v", err)
		}
	}

	// addBackDanglingItems: what pruning removed must have been the
	// applier's.
	ps, err := pruned.ToFieldSet()
	if err != nil {
		return nil, fmt.Errorf("failed add back dangling items: failed to create field set from pruned object in last applied version: %v", err)
	}
	ms, err := mergedSetAt(last.APIVersion())
	if err != nil {
		return nil, fmt.Errorf("failed add back dangling items: failed to create field set from merged object in last applied version: %v", mergedErr)
	}
	return merged.RemoveItems(ms.Difference(ps.EnsureNamedFieldsAreMembers(sc, tr)).Intersection(lastSet)), nil
}
