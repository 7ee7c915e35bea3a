package patch

import (
	"bytes"
	"encoding/json"
	"fmt"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// SetPruneShortcut turns prune's keepsAll shortcut and merge's on or off,
// for tests that check they change nothing; it returns the previous
// setting.
func SetPruneShortcut(on bool) bool {
	was := pruneUnchanged
	pruneUnchanged, mergeChanged = on, on
	return was
}

// FieldSets returns obj's field set as fieldSet builds it and as smd's
// ToFieldSet does, both serialized.
func FieldSets(m *FieldManager, obj map[string]any) (fast, smd string, err error) {
	tv, err := m.typ.FromUnstructured(toSMD(obj), typed.AllowDuplicates)
	if err != nil {
		return "", "", err
	}
	f, err := fieldSet(tv)
	if err != nil {
		return "", "", err
	}
	s, err := tv.ToFieldSet()
	if err != nil {
		return "", "", err
	}
	fb, _ := f.ToJSON()
	sb, _ := s.ToJSON()
	return string(fb), string(sb), nil
}

// SetFastUpdate turns Update's shortcuts on or off (off: it asks smd to
// compare and writes every fieldsV1 again), for tests that check they
// change nothing; it returns the previous setting.
func SetFastUpdate(on bool) bool {
	was := fastCompare
	fastCompare, reuseFields = on, on
	return was
}

// FieldsRoundTrip decodes a fieldsV1 trie and writes its set again: canon
// is what decodeFields reports, smdSame that smd's Set.FromJSON reads the
// trie's JSON as the same set.
func FieldsRoundTrip(fields map[string]any) (again map[string]any, canon, smdSame bool, err error) {
	s, canon, err := decodeFields(fields)
	if err != nil {
		return nil, false, false, err
	}
	b, err := json.Marshal(fields)
	if err != nil {
		return nil, false, false, err
	}
	var want fieldpath.Set
	smdSame = want.FromJSON(bytes.NewReader(b)) == nil && want.Equals(s)
	return setToFields(s), canon, smdSame, nil
}

// EncodedFieldSet is the fieldsV1 trie of obj's field set.
func EncodedFieldSet(m *FieldManager, obj map[string]any) (map[string]any, error) {
	tv, err := m.typ.FromUnstructured(toSMD(obj), typed.AllowDuplicates)
	if err != nil {
		return nil, err
	}
	s, err := tv.ToFieldSet()
	if err != nil {
		return nil, err
	}
	return setToFields(s), nil
}

// CompareJSON returns live.Compare(obj) as compareJSON computes it (ok
// reports it did) and as smd's Compare of the two objects' typed values
// does, each serialized; err is smd's validation error for either.
func CompareJSON(m *FieldManager, live, obj map[string]any) (fast, smd string, ok bool, err error) {
	if c, done := compareJSON(m.typ.Schema, m.typ.TypeRef, live, obj); done {
		fast, ok = comparisonString(c), true
	}
	l, err := m.typ.FromUnstructured(toSMD(live), typed.AllowDuplicates)
	if err != nil {
		return fast, "", ok, err
	}
	o, err := m.typ.FromUnstructured(toSMD(obj), typed.AllowDuplicates)
	if err != nil {
		return fast, "", ok, err
	}
	c, err := l.Compare(o)
	if err != nil {
		return fast, "", ok, err
	}
	return fast, comparisonString(c), ok, nil
}

func comparisonString(c *typed.Comparison) string {
	r, _ := c.Removed.ToJSON()
	m, _ := c.Modified.ToJSON()
	a, _ := c.Added.ToJSON()
	return "removed " + string(r) + " modified " + string(m) + " added " + string(a)
}

// ManagerID returns the manager identifier of a key as managerID writes
// it and as encoding/json does, and whether parseManagerID reads it back
// as the key json.Unmarshal reads.
func ManagerID(manager, op, apiVersion, sub string) (id, std string, back bool) {
	k := managerKey{Manager: manager, Operation: op, APIVersion: apiVersion, Subresource: sub}
	id = managerID(k)
	if k.Operation == OperationApply {
		k.APIVersion = ""
	}
	b, _ := json.Marshal(k)
	got, ok := parseManagerID(id)
	var want managerKey
	err := json.Unmarshal([]byte(id), &want)
	return id, string(b), ok && err == nil && got == want
}

// Reconcile decodes a fieldsV1 trie and reconciles its set with m's
// schema: noop is safeTypes.noop's answer, changed and err smd's.
func Reconcile(m *FieldManager, fields map[string]any) (noop, changed bool, err error) {
	s, _, err := decodeFields(fields)
	if err != nil {
		return false, false, err
	}
	tv := view(map[string]any{}, m.typ.Schema, m.typ.TypeRef)
	noop = m.any.safe.noop(m.typ.Schema, m.typ.TypeRef, s, false)
	out, err := typed.ReconcileFieldSetWithSchema(s, tv)
	return noop, out != nil, err
}

// PlainElement reads k with plainElement; same reports that smd reads
// the same element (values of the same Go types, keys in the same order)
// and writes it back as k.
func PlainElement(k string) (ok, same bool) {
	pe, ok := plainElement(k)
	if !ok {
		return false, false
	}
	want, err := fieldpath.DeserializePathElement(k)
	if err != nil || !pe.Equals(want) {
		return true, false
	}
	back, err := fieldpath.SerializePathElement(pe)
	if err != nil || back != k {
		return true, false
	}
	types := func(pe fieldpath.PathElement) string {
		if pe.Value != nil {
			return fmt.Sprintf("%T", (*pe.Value).Unstructured())
		}
		var s string
		for _, f := range *pe.Key {
			s += fmt.Sprintf("%s:%T,", f.Name, f.Value.Unstructured())
		}
		return s
	}
	return true, types(pe) == types(want)
}

// PEKeys returns the key of a path element as peKey writes it and as smd
// does.
func PEKeys(pe fieldpath.PathElement) (fast, smd string) {
	smd, _ = fieldpath.SerializePathElement(pe)
	return peKey(pe), smd
}

// SameCompiled reports whether a and b share what they compiled from
// their schema (compiledSchema): the same structured-merge-diff types.
func SameCompiled(a, b *FieldManager) bool { return a.typ.Schema == b.typ.Schema }
