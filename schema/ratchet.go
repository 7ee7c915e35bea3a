package schema

import (
	"fmt"
	"strings"
)

// ValidateUpdate checks obj, the new state of old, as kube-apiserver
// checks an update of a custom resource with validation ratcheting (the
// CRDValidationRatcheting feature, on by default since kube 1.30): the
// schema errors of a value that is unchanged from old are not reported,
// so an object stored before its schema was tightened can still be
// updated in its other fields.
//
// A value is correlated with its old counterpart, and so found unchanged
// or not, as kube does it:
//   - an object's properties (and additionalProperties values) by key;
//   - the items of an x-kubernetes-list-type map list by their map keys
//     (the first old item with the same keys);
//   - nothing else: items of set and atomic lists are not correlated, so a
//     changed list reports the errors of all its items, and the branches of
//     allOf, anyOf, oneOf and not are checked as on create.
//
// A correlated value is unchanged when it is deeply equal to its old
// value (an object with a key the schema does not describe never is).
// Uncorrelated values are checked as by Validate; so are the kind and
// apiVersion of the root. Embedded resources are checked as on create,
// and the uniqueness of set and map list items only if old had no
// duplicates. ValidateUpdate(obj, nil) reports what Validate(obj) does.
func (s *Schema) ValidateUpdate(obj, old any) []FieldError {
	return s.validateUpdate(obj, old, false)
}

// validateUpdate is ValidateUpdate; with full, it checks every value,
// unchanged ones too, before dropping the errors of those (the tests hold
// the skipping to that).
func (s *Schema) validateUpdate(obj, old any, full bool) []FieldError {
	v := validator{full: full}
	v.value(s, obj, &corr{old: old, new: obj, s: s})
	errs := v.result()
	if m, ok := obj.(map[string]any); ok && s != nil {
		errs = append(errs, embeddedErrors(s, m)...)
		if news := listErrors(s, m); len(news) > 0 && len(listErrors(s, old)) == 0 {
			errs = append(errs, news...)
		}
	}
	return errs
}

// ValidateStatusUpdate checks obj, the new state of old after a write to
// the status subresource, as kube checks one: only the status is checked
// against the schema, with ratcheting, by the schema of the status
// property alone (so kube's messages name the path below status:
// "phase in body should be one of ..." for field status.phase); and the
// uniqueness of set and map list items of the whole object, if old had no
// duplicates. Embedded resources are not checked.
func (s *Schema) ValidateStatusUpdate(obj, old map[string]any) []FieldError {
	return s.validateStatusUpdate(obj, old, false)
}

// validateStatusUpdate is ValidateStatusUpdate; full is validateUpdate's.
func (s *Schema) validateStatusUpdate(obj, old map[string]any, full bool) []FieldError {
	if s == nil {
		return nil
	}
	var errs []FieldError
	if st, ok := obj["status"]; ok {
		if ss, ok := s.Properties["status"]; ok {
			v := validator{full: full}
			v.value(ss, st, &corr{old: old["status"], new: st, s: ss})
			for _, e := range v.result() {
				if e.Field == "" || e.Field == "<nil>" {
					e.Field = "status"
				} else {
					e.Field = "status." + e.Field
				}
				errs = append(errs, e)
			}
		}
	}
	if news := listErrors(s, obj); len(news) > 0 && len(listErrors(s, old)) == 0 {
		errs = append(errs, news...)
	}
	return errs
}

// corr is kube's common.CorrelatedObject: a value of the new object, the
// value it corresponds to in the old one, and the schema of both. A nil
// *corr is an uncorrelated value.
type corr struct {
	old, new any
	s        *Schema
	eq       int8 // 0 not known yet, 1 equal, -1 not equal
	// keyed is the old items of a list-type map by their keys, built on
	// the first lookup (hasKeyed tells that it was).
	keyed    map[any]any
	hasKeyed bool
	kids     map[any]*corr
}

// field is the correlation of the property or additionalProperties value
// k of an object at path: none at the root for kind and apiVersion, none
// unless old and new both have k and the schema describes it.
func (c *corr) field(k string, root bool) *corr {
	if root && (k == "kind" || k == "apiVersion") {
		return nil
	}
	return c.key(k)
}

func (c *corr) key(k string) *corr {
	if c == nil || c.s == nil {
		return nil
	}
	if ch, ok := c.kids[k]; ok {
		return ch
	}
	om, ok1 := c.old.(map[string]any)
	nm, ok2 := c.new.(map[string]any)
	if !ok1 || !ok2 {
		return nil
	}
	ov, ok1 := om[k]
	nv, ok2 := nm[k]
	if !ok1 || !ok2 {
		return nil
	}
	ps, ok := c.s.Properties[k]
	if !ok {
		if ps = c.s.AdditionalProperties; ps == nil {
			return nil
		}
	}
	return c.kid(k, &corr{old: ov, new: nv, s: ps})
}

// sameLeaf reports whether field(k, path) is correlated, a scalar in
// both old and new, and unchanged: a value whose check can be skipped,
// as all its errors would be dropped.
func (c *corr) sameLeaf(k string, root bool) bool {
	if c == nil || root && (k == "kind" || k == "apiVersion") {
		return false
	}
	same, ok := c.leaf(k)
	return ok && same
}

// leaf is the equality of key(k) without making it, for a scalar in old
// and new: ok is false if key(k) is nil or either value is an object or
// a list.
func (c *corr) leaf(k string) (same, ok bool) {
	if c == nil || c.s == nil {
		return false, false
	}
	om, ok1 := c.old.(map[string]any)
	nm, ok2 := c.new.(map[string]any)
	if !ok1 || !ok2 {
		return false, false
	}
	ov, ok1 := om[k]
	nv, ok2 := nm[k]
	if !ok1 || !ok2 || isContainer(ov) || isContainer(nv) {
		return false, false
	}
	if _, ok := c.s.Properties[k]; !ok && c.s.AdditionalProperties == nil {
		return false, false
	}
	return sameJSON(ov, nv), true // what compare finds for scalars
}

func isContainer(x any) bool {
	switch x.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

func (c *corr) kid(k any, ch *corr) *corr {
	if c.kids == nil {
		c.kids = map[any]*corr{}
	}
	c.kids[k] = ch
	return ch
}

// index is the correlation of item i of a list: only items of a list-type
// map have one.
func (c *corr) index(i int) *corr {
	if c == nil || c.s == nil {
		return nil
	}
	if ch, ok := c.kids[i]; ok {
		return ch
	}
	nl, ok := c.new.([]any)
	if !ok || len(nl) <= i {
		return nil
	}
	ol, ok := c.old.([]any)
	if !ok || c.s.ListType != "map" {
		return nil
	}
	if !c.hasKeyed {
		c.keyed, c.hasKeyed = oldItemsByKey(c.s, ol), true
	}
	nm, ok := nl[i].(map[string]any)
	if !ok {
		return nil
	}
	k, ok := mapListKey(c.s, nm)
	if !ok {
		return nil
	}
	ov, ok := c.keyed[k]
	if !ok || c.s.Items == nil {
		return nil
	}
	return c.kid(i, &corr{old: ov, new: nl[i], s: c.s.Items})
}

// oldItemsByKey is kube's MakeMapList: the first item of each key.
func oldItemsByKey(s *Schema, l []any) map[any]any {
	out := map[any]any{}
	if s.Type != "array" || len(s.ListMapKeys) == 0 {
		return out
	}
	for _, x := range l {
		m, ok := x.(map[string]any)
		if !ok {
			continue
		}
		if k, ok := mapListKey(s, m); ok {
			if _, dup := out[k]; !dup {
				out[k] = m
			}
		}
	}
	return out
}

// mapListKey is the key kube correlates list-type map items by: the
// value of a single key (a bool, int64, float64 or string), or the
// scalars of several keys joined; false when a key is missing or not a
// scalar.
func mapListKey(s *Schema, m map[string]any) (any, bool) {
	if len(s.ListMapKeys) == 0 {
		return nil, false
	}
	if len(s.ListMapKeys) == 1 {
		switch k := kubeValue(m[s.ListMapKeys[0]]).(type) {
		case bool, int64, float64, string:
			return k, true
		}
		return nil, false
	}
	var b strings.Builder
	for _, f := range s.ListMapKeys {
		switch k := kubeValue(m[f]).(type) {
		case bool:
			fmt.Fprintf(&b, "\x00%t", k)
		case float64:
			fmt.Fprintf(&b, "\x00%f", k)
		case int64:
			fmt.Fprintf(&b, "\x00%d", k)
		case string:
			fmt.Fprintf(&b, "\x00%q", k)
		default:
			return nil, false
		}
	}
	return b.String(), true
}

// equal is kube's CachedDeepEqual: whether the new value is the old one.
// Lists of type map compare item by correlated item (so reordering keeps
// them equal), other lists and scalars by value, objects key by key.
func (c *corr) equal() bool {
	if c == nil {
		return false
	}
	if c.eq == 0 {
		c.eq = -1
		if c.compare() {
			c.eq = 1
		}
	}
	return c.eq == 1
}

func (c *corr) compare() bool {
	if c.old == nil || c.new == nil {
		return c.old == nil && c.new == nil
	}
	ol, oIsList := c.old.([]any)
	nl, nIsList := c.new.([]any)
	om, oIsMap := c.old.(map[string]any)
	nm, nIsMap := c.new.(map[string]any)
	if oIsList != nIsList || oIsMap != nIsMap {
		return false
	}
	switch {
	case oIsList:
		if len(ol) != len(nl) {
			return false
		}
		for i := range nl {
			ch := c.index(i)
			if ch == nil {
				if !c.hasKeyed {
					return sameJSON(ol, nl)
				}
				return false
			}
			if !ch.equal() {
				return false
			}
		}
		return true
	case oIsMap:
		if len(om) != len(nm) {
			return false
		}
		for k := range nm {
			if same, ok := c.leaf(k); ok {
				if !same {
					return false
				}
				continue
			}
			if ch := c.key(k); ch == nil || !ch.equal() {
				return false
			}
		}
		return true
	}
	return sameJSON(c.old, c.new)
}
