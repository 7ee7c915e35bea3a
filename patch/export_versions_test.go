package patch

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/merge"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// WithSMD runs one write of obj over live (whose managedFields are the
// managers) by manager at m's version, through m's updater with convert
// and through structured-merge-diff's own merge.Updater with a Converter
// over convert, as kube's field manager runs it; each result is written
// as text: the error, or the managers' sets and (apply) the new object.
func WithSMD(m *FieldManager, live, obj map[string]any, apply, force bool, manager string, convert ConvertFunc) (kapi, smd string, err error) {
	entries, _ := managedFieldsOf(live)
	mg, err := decodeManaged(entries, false)
	if err != nil {
		return "", "", err
	}
	liveTV, err := m.typ.FromUnstructured(toSMD(withoutManagedFields(live)), typed.AllowDuplicates)
	if err != nil {
		return "", "", err
	}
	objTV, err := m.typ.FromUnstructured(toSMD(withoutManagedFields(obj)))
	if err != nil {
		return "", "", err
	}
	u := m.updater("")
	clone := func() fieldpath.ManagedFields {
		c := make(fieldpath.ManagedFields, len(mg.fields))
		for k, v := range mg.fields {
			c[k] = v
		}
		return c
	}
	conv := &versions{convert: convert}
	up := (&merge.UpdaterBuilder{Converter: smdConverter{convert}}).BuildUpdater()
	var kt, st *typed.TypedValue
	var kf, sf fieldpath.ManagedFields
	var ke, se error
	if apply {
		kt, kf, ke = u.apply(conv, liveTV, objTV, clone(), manager, force)
		st, sf, se = up.Apply(liveTV, objTV, u.version, clone(), manager, force)
	} else {
		conv.live, conv.obj = liveTV, objTV
		kf, ke = u.update(conv, liveTV, func() (*typed.Comparison, error) { return compare(liveTV, objTV) }, clone(), manager)
		_, sf, se = up.Update(liveTV, objTV, u.version, clone(), manager)
	}
	return render(kt, kf, ke), render(st, sf, se), nil
}

func render(tv *typed.TypedValue, mf fieldpath.ManagedFields, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	ids := make([]string, 0, len(mf))
	for id := range mf {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		vs := mf[id]
		fmt.Fprintf(&b, "%s at %s (applied %v): %s\n", id, vs.APIVersion(), vs.Applied(), vs.Set().String())
	}
	if tv != nil {
		j, _ := json.Marshal(fromSMD(toSMD(tv.AsValue().Unstructured())))
		fmt.Fprintf(&b, "object: %s\n", j)
	}
	return b.String()
}

// smdConverter is kube's versionConverter over a ConvertFunc.
type smdConverter struct{ convert ConvertFunc }

func (c smdConverter) Convert(tv *typed.TypedValue, v fieldpath.APIVersion) (*typed.TypedValue, error) {
	m, _ := tv.AsValue().Unstructured().(map[string]any)
	if av, _ := m["apiVersion"].(string); av == string(v) {
		return tv, nil
	}
	in, _ := fromSMD(toSMD(m)).(map[string]any)
	out, fm, err := c.convert(in, string(v))
	if err != nil {
		return tv, err
	}
	return fm.typ.FromUnstructured(toSMD(out))
}

func (smdConverter) IsMissingVersionError(err error) bool { return errors.Is(err, ErrMissingVersion) }
