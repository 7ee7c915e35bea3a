package patch

import "sigs.k8s.io/structured-merge-diff/v6/typed"

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
