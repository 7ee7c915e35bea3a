package patch

import (
	"encoding/json"
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
	reset   *fieldpath.Set   // the set filter excludes; nil: none
	safe    safeTypes        // the schema's types reconciliation never changes
}

// filterFor is IgnoreFilter[v]: only the manager's own version has one.
func (u *updater) filterFor(v fieldpath.APIVersion) fieldpath.Filter {
	if v == u.version {
		return u.filter
	}
	return nil
}

// reconcile is reconcileManagedFieldsWithSchemaChanges: it returns a new
// map, so managers is not modified. conv converts live for managers at
// other versions (versions.go; nil: read them at u's).
func (u *updater) reconcile(conv *versions, live *typed.TypedValue, managers fieldpath.ManagedFields) (fieldpath.ManagedFields, error) {
	out := make(fieldpath.ManagedFields, len(managers))
	for id, vs := range managers {
		if conv != nil && vs.APIVersion() != u.version {
			vs, drop, err := u.reconcileAt(conv, live, vs)
			if err != nil {
				return nil, err
			}
			if !drop {
				out[id] = vs
			}
			continue
		}
		if fastCompare && u.safe.noop(live.Schema(), live.TypeRef(), vs.Set(), false) {
			out[id] = vs
			continue
		}
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
// version (with the identity conversion, the same walk). conv, when
// set, compares managers at other versions there (versions.go).
func (u *updater) diff(conv *versions, cmp func() (*typed.Comparison, error), managers fieldpath.ManagedFields, workflow string, force bool) (fieldpath.ManagedFields, *typed.Comparison, error) {
	raw, err := cmp()
	if err != nil {
		return nil, nil, fmt.Errorf("failed to compare objects: %v", err)
	}
	versions := map[fieldpath.APIVersion]*typed.Comparison{}
	compareAt := func(v fieldpath.APIVersion) (*typed.Comparison, error) {
		if c, ok := versions[v]; ok {
			return c, nil
		}
		if conv != nil && v != u.version {
			c, err := u.compareAt(conv, v)
			if err != nil {
				return nil, err
			}
			versions[v] = c // nil: a missing version
			return c, nil
		}
		c := raw
		if f := u.filterFor(v); f != nil {
			c = &typed.Comparison{Removed: f.Filter(raw.Removed), Modified: f.Filter(raw.Modified), Added: f.Filter(raw.Added)}
		}
		versions[v] = c
		return c, nil
	}
	changed := map[*typed.Comparison]*fieldpath.Set{}
	changedSet := func(c *typed.Comparison) *fieldpath.Set {
		s, ok := changed[c]
		if !ok {
			s = c.Modified.Union(c.Added)
			changed[c] = s
		}
		return s
	}
	compare, _ := compareAt(u.version)
	conflicts := fieldpath.ManagedFields{}
	removed := fieldpath.ManagedFields{}
	for id, vs := range managers {
		if id == workflow {
			continue
		}
		c, err := compareAt(vs.APIVersion())
		if err != nil {
			return nil, nil, err
		}
		if c == nil {
			delete(managers, id) // kube drops a manager at a missing version
			continue
		}
		if set := vs.Set().Intersection(changedSet(c)); !set.Empty() {
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

// update is merge.Updater.Update, cmp comparing live with the new object
// (conv, when set, has both for managers at other versions).
func (u *updater) update(conv *versions, live *typed.TypedValue, cmp func() (*typed.Comparison, error), managers fieldpath.ManagedFields, manager string) (fieldpath.ManagedFields, error) {
	managers, err := u.reconcile(conv, live, managers)
	if err != nil {
		return nil, err
	}
	managers, compare, err := u.diff(conv, cmp, managers, manager, true)
	if err != nil {
		return nil, err
	}
	own := fieldpath.NewSet()
	if vs, ok := managers[manager]; ok {
		own = vs.Set()
	}
	// Set operations with an empty side are skipped: they would copy
	// the other (strip's difference normalizes the result anyway).
	set := own
	if !compare.Removed.Empty() {
		set = set.Difference(compare.Removed)
	}
	for _, s := range []*fieldpath.Set{compare.Modified, compare.Added} {
		switch {
		case s.Empty():
		case set.Empty():
			set = s
		default:
			set = set.Union(s)
		}
	}
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
// it equals live. conv, when set, converts for managers at other
// versions (versions.go).
func (u *updater) apply(conv *versions, live, config *typed.TypedValue, managers fieldpath.ManagedFields, manager string, force bool) (*typed.TypedValue, fieldpath.ManagedFields, error) {
	managers, err := u.reconcile(conv, live, managers)
	if err != nil {
		return nil, nil, err
	}
	merged, err := mergeTyped(live, config)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to merge config: %v", err)
	}
	last := managers[manager]
	set, err := fieldSet(config)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to get field set: %v", err)
	}
	if u.filter != nil {
		set = u.filter.Filter(set)
	}
	managers[manager] = fieldpath.NewVersionedSet(set, u.version, true)
	if last != nil && !last.Set().Empty() && conv.other(u, managers, last) {
		merged, err = u.pruneVersions(conv, merged, managers, last)
	} else {
		merged, err = u.prune(merged, managers, last)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("failed to prune fields: %w", err)
	}
	cmp := func() (*typed.Comparison, error) { return compare(live, merged) }
	if conv != nil {
		conv.live, conv.obj = live, merged
	}
	if managers, _, err = u.diff(conv, cmp, managers, manager, force); err != nil {
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
			byVersion[vs.APIVersion()] = vs.Set() // sets are not modified: a union is a new set
		}
	}
	var mergedSet *fieldpath.Set
	mergedErr := error(nil)
	mergedSetAt := func(v fieldpath.APIVersion) (*fieldpath.Set, error) {
		if mergedSet == nil && mergedErr == nil {
			s, err := fieldSet(merged)
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
		ps, err := fieldSet(pruned)
		if err != nil {
			return fmt.Errorf("failed to create field set from pruned object at version %v: %v", v, err)
		}
		pruned = merged.RemoveItems(ms.Difference(ps.EnsureNamedFieldsAreMembers(sc, tr).Union(managed.EnsureNamedFieldsAreMembers(sc, tr))))
		return nil
	}
	if pruneUnchanged && len(byVersion) == 1 && byVersion[u.version] != nil {
		if ms, err := mergedSetAt(u.version); err == nil && keepsAll(lastSet, ms, byVersion[u.version].EnsureNamedFieldsAreMembers(sc, tr)) {
			return merged, nil
		}
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
	ps, err := fieldSet(pruned)
	if err != nil {
		return nil, fmt.Errorf("failed add back dangling items: failed to create field set from pruned object in last applied version: %v", err)
	}
	ms, err := mergedSetAt(last.APIVersion())
	if err != nil {
		return nil, fmt.Errorf("failed add back dangling items: failed to create field set from merged object in last applied version: %v", mergedErr)
	}
	return merged.RemoveItems(ms.Difference(ps.EnsureNamedFieldsAreMembers(sc, tr)).Intersection(lastSet)), nil
}

// compare is live.Compare(obj) over only the parts that differ: every map
// entry with the same key and an identical value on both sides is left
// out of both, at every depth. Such an entry adds nothing to a comparison
// (it is neither added, removed nor modified, and a map left empty on
// both sides is an equal leaf), so the result is the same, and the walk
// through smd's generic values is over the change instead of the object.
// Both values were validated when they became typed values.
func compare(live, obj *typed.TypedValue) (*typed.Comparison, error) {
	l, lok := live.AsValue().Unstructured().(map[string]any)
	r, rok := obj.AsValue().Unstructured().(map[string]any)
	if !lok || !rok {
		return live.Compare(obj)
	}
	l, r = changed(l, r)
	sc, tr := live.Schema(), live.TypeRef()
	return view(l, sc, tr).Compare(view(r, sc, tr))
}

// changed returns l and r without the entries they share (same key,
// identical value), recursively through maps on both sides; l and r are
// not modified.
func changed(l, r map[string]any) (map[string]any, map[string]any) {
	lo := make(map[string]any, len(l))
	ro := make(map[string]any, len(r))
	for k, rv := range r {
		lv, ok := l[k]
		if !ok {
			ro[k] = rv
			continue
		}
		if identical(lv, rv) {
			continue
		}
		lm, lok := lv.(map[string]any)
		rm, rok := rv.(map[string]any)
		if lok && rok {
			lv, rv = changed(lm, rm)
		}
		lo[k], ro[k] = lv, rv
	}
	for k, lv := range l {
		if _, ok := r[k]; !ok {
			lo[k] = lv
		}
	}
	return lo, ro
}

// identical reports whether a and b are the same JSON-form value, with the
// same Go types (so that smd's equality holds too); nulls are never
// identical, which keeps every null for smd to judge.
func identical(a, b any) bool {
	switch a := a.(type) {
	case string:
		b, ok := b.(string)
		return ok && a == b
	case json.Number:
		b, ok := b.(json.Number)
		return ok && a == b
	case int64:
		b, ok := b.(int64)
		return ok && a == b
	case bool:
		b, ok := b.(bool)
		return ok && a == b
	case float64:
		b, ok := b.(float64)
		return ok && a == b
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, av := range a {
			bv, ok := b[k]
			if !ok || !identical(av, bv) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !identical(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// pruneUnchanged enables keepsAll's shortcut (tests turn it off to check
// that it changes nothing).
var pruneUnchanged = true

// keepsAll reports, for one version, that prune would return merged
// unchanged, without pruning: last is the applier's previous set, merged
// the merged object's and managed every manager's (the applier's new one
// included), each with its named fields as members. Pruning removes from
// merged what is in last but no longer in the pruned object; the pruned
// object is merged less the paths neither it after removing last nor a
// manager holds — unmanaged paths (a subset of merged − managed). So
// nothing is removed when
//   - every path of last that merged has is managed, and
//   - no unmanaged path is an ancestor of such a path, or lies inside a
//     list item (removing part of an item can leave it without its keys,
//     an error for smd);
//
// and smd's field sets of the intermediate objects do not fail when every
// list item last reaches into is a member of last itself (so it is
// removed whole rather than emptied).
func keepsAll(last, merged, managed *fieldpath.Set) bool {
	if !itemsWhole(last) {
		return false
	}
	held := last.Intersection(merged)
	if !held.Difference(managed).Empty() {
		return false
	}
	ok := true
	merged.Difference(managed).Iterate(func(p fieldpath.Path) {
		if !ok {
			return
		}
		for _, pe := range p[:len(p)-1] {
			if pe.FieldName == nil {
				ok = false
				return
			}
		}
		n := held
		for _, pe := range p {
			c, found := n.Children.Get(pe)
			if !found {
				return
			}
			n = c
		}
		ok = n.Empty()
	})
	return ok
}

// itemsWhole reports whether every list item (key, value or index element)
// s has children under is a member of s as well.
func itemsWhole(s *fieldpath.Set) bool {
	ok := true
	s.Children.Iterate(func(pe fieldpath.PathElement) {
		if !ok {
			return
		}
		if pe.FieldName == nil && !s.Members.Has(pe) {
			ok = false
			return
		}
		c, _ := s.Children.Get(pe)
		ok = itemsWhole(c)
	})
	return ok
}

// mergeChanged enables mergeTyped's shortcut (tests turn it off to check that
// it changes nothing).
var mergeChanged = true

// mergeTyped is live.Merge(config) with smd merging only what differs: map
// entries identical on both sides merge into themselves (config's value
// wins and is the same), so they are left out of smd's merge and put back
// into its result. Anything unexpected, errors included, goes through
// smd's merge of the whole objects.
func mergeTyped(live, config *typed.TypedValue) (*typed.TypedValue, error) {
	l, lok := live.AsValue().Unstructured().(map[string]any)
	r, rok := config.AsValue().Unstructured().(map[string]any)
	if !mergeChanged || !lok || !rok {
		return live.Merge(config)
	}
	lr, rr := changed(l, r)
	sc, tr := live.Schema(), live.TypeRef()
	m, err := view(lr, sc, tr).Merge(view(rr, sc, tr))
	if err != nil {
		return live.Merge(config)
	}
	out, ok := m.AsValue().Unstructured().(map[string]any)
	if !ok || !putBack(out, l, r) {
		return live.Merge(config)
	}
	return view(out, sc, tr), nil
}

// putBack puts the entries changed left out of l and r back into out,
// the merge of what it kept; out's maps along the way are the merge's
// own. It reports false when out does not have the shape it should.
func putBack(out, l, r map[string]any) bool {
	for k, rv := range r {
		lv, ok := l[k]
		if !ok {
			continue
		}
		if identical(lv, rv) {
			if _, taken := out[k]; taken {
				return false
			}
			out[k] = rv
			continue
		}
		lm, lok := lv.(map[string]any)
		rm, rok := rv.(map[string]any)
		if lok && rok {
			om, ok := out[k].(map[string]any)
			if !ok || !putBack(om, lm, rm) {
				return false
			}
		}
	}
	return true
}
