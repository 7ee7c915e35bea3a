package builtin

import (
	"bytes"
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/kapi-dev/kapi/registry"
)

// Kube's validation messages print values of its internal Go types
// (k8s.io/kubernetes/pkg/apis/core, …), not of the versioned ones kapi
// stores. field.Invalid(path, value, detail) writes a struct value with
// encoding/json, and the internal types have no json tags: Go field
// names, every field present (nil as null, "" and false and 0 written),
// in the internal struct's order; only what they embed from
// apimachinery (ObjectMeta, flattened into the struct, LabelSelector…)
// keeps its json names and omitempty. A Job's template:
//
//	stored:  {"metadata":{"labels":{"app":"a"}},"spec":{"containers":[{"name":"c","image":"i",…}],"restartPolicy":"Never",…}}
//	kube:    {"labels":{"app":"a"},"Spec":{"Volumes":null,"InitContainers":null,"Containers":[{"Name":"c","Image":"i","Command":null,…}],…,"RestartPolicy":"Never",…}}
//
// And a Pod or PersistentVolumeClaim update that changes what it may not
// appends apimachinery's diff.Diff of the internal specs: a unified diff
// (github.com/pmezard/go-difflib, three lines of context, no file header)
// of their json.MarshalIndent(v, "", " ").
//
// goStructs (zz_generated_gostruct.go, written by gen/builtin from the
// internal types and k8s.io/api's) lists each internal struct's fields in
// encoding/json's order, each with the key it writes, the path of its
// value in the versioned JSON, its type and omitempty/omitzero; goValue
// walks a stored value along it. Types are named as in the table:
// "core.PodSpec" (a struct), "*T", "[]T", "map[]T" (string keys, written
// sorted), "string", "bool", "int", "float", "bytes" (base64, as stored),
// and the types that write themselves: "Quantity" (canonical string, "0"
// when unset), "IntOrString", "Time" and "MicroTime" (null when unset),
// "Duration" ("0s" when unset), "Raw" (the stored JSON as is). A value of
// the wrong JSON type is written as the zero of its Go type, so any input
// renders (FuzzGoValue).

// goField is one field of an internal struct: the key encoding/json
// writes, the dotted path of its value in the versioned object ("" when
// the internal field has no versioned source: always zero), its type,
// and its json options (omitempty 1, omitzero 2).
type goField struct {
	Key, From, Type string
	Omit            uint8
}

// goValue is v, a stored (versioned, defaulted) value of internal type
// typ, as kube's field.Invalid prints it: a validation.Error Value, which
// writes it as is.
func goValue(typ string, v any) json.RawMessage {
	return json.RawMessage(appendGo(nil, typ, v))
}

// immutableGo is immutable with the value printed as kube's internal
// type typ (ValidateImmutableField of an internal value).
func immutableGo(o, old registry.Object, field, typ string, path ...string) fieldErrors {
	errs := immutable(o, old, field, path...)
	for i := range errs {
		errs[i].Value = goValue(typ, errs[i].Value)
	}
	return errs
}

// goDiff is kube's diff.Diff of old and new converted to internal type
// typ: the unified diff of their indented JSON ("" when they render the
// same).
func goDiff(typ string, old, new any) string {
	indent := func(v any) string {
		var b bytes.Buffer
		if err := json.Indent(&b, goValue(typ, v), "", " "); err != nil {
			return err.Error() // appendGo writes valid JSON; FuzzGoValue checks
		}
		return b.String()
	}
	s, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A:       difflib.SplitLines(indent(old)),
		B:       difflib.SplitLines(indent(new)),
		Context: 3,
	})
	if err != nil {
		return "error generating diff: " + err.Error()
	}
	return s
}

// podSpecUpdateDiff is the diff kube's ValidatePodUpdate appends to its
// "pod updates may not change fields other than …" message: the old spec
// against the new one with what an update may change put back as it was
// (the containers' images, activeDeadlineSeconds, schedulingGates,
// tolerations, a terminationGracePeriodSeconds of 1 that was negative;
// for a pod with scheduling gates, nodeSelector and node affinity), so
// only the forbidden changes show.
func podSpecUpdateDiff(oldSpec, newSpec map[string]any) string {
	m, _ := clone(newSpec).(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	for _, list := range []string{"containers", "initContainers"} {
		olds := getList(oldSpec, list)
		cs := getList(m, list)
		if len(cs) == 0 {
			delete(m, list) // kube rebuilds the slice: none is nil
		}
		for i, c := range cs {
			c, ok := c.(map[string]any)
			if !ok {
				continue
			}
			var img any
			if i < len(olds) {
				img = get(olds[i], "image")
			}
			setOrDelete(c, "image", img)
		}
	}
	for _, f := range []string{"activeDeadlineSeconds", "schedulingGates", "tolerations"} {
		setOrDelete(m, f, oldSpec[f])
	}
	if o, n := goNumber(oldSpec["terminationGracePeriodSeconds"]), goNumber(m["terminationGracePeriodSeconds"]); o < 0 && n == 1 {
		m["terminationGracePeriodSeconds"] = oldSpec["terminationGracePeriodSeconds"]
	}
	if len(getList(oldSpec, "schedulingGates")) > 0 {
		setOrDelete(m, "nodeSelector", oldSpec["nodeSelector"])
		oldNA, newNA := get(oldSpec, "affinity", "nodeAffinity"), get(m, "affinity", "nodeAffinity")
		if !equal(oldNA, newNA) {
			aff := getMap(m, "affinity")
			switch {
			case aff == nil && oldNA == nil:
			case aff == nil:
				m["affinity"] = map[string]any{"nodeAffinity": oldNA}
			case getMap(oldSpec, "affinity") == nil && aff["podAffinity"] == nil && aff["podAntiAffinity"] == nil:
				delete(m, "affinity")
			default:
				setOrDelete(aff, "nodeAffinity", oldNA)
			}
		}
	}
	return goDiff("core.PodSpec", oldSpec, m)
}

// pvcSpecUpdateDiff is the diff kube's ValidatePersistentVolumeClaimUpdate
// appends to its "spec is immutable after creation except
// resources.requests and volumeAttributesClassName for bound claims"
// message, of the old and new claims' specs with what an update may
// change put back: a first volumeName, a storageClassName set from nil
// or from the beta annotation, and for a bound claim its storage request
// and volumeAttributesClassName.
func pvcSpecUpdateDiff(old, new map[string]any) string {
	oldSpec, newSpec := pvcSpecsReconciled(old, new)
	return goDiff("core.PersistentVolumeClaimSpec", oldSpec, newSpec)
}

// pvcSpecsReconciled are the specs kube's ValidatePersistentVolumeClaimUpdate
// compares: copies of the old and new claims' specs, with what an update
// may change put back into the new one.
func pvcSpecsReconciled(old, new map[string]any) (oldSpec, newSpec map[string]any) {
	oldSpec, _ = clone(getMap(old, "spec")).(map[string]any)
	newSpec, _ = clone(getMap(new, "spec")).(map[string]any)
	if oldSpec == nil {
		oldSpec = map[string]any{}
	}
	if newSpec == nil {
		newSpec = map[string]any{}
	}
	if getString(oldSpec, "volumeName") == "" {
		setOrDelete(oldSpec, "volumeName", newSpec["volumeName"])
	}
	const betaClass = "volume.beta.kubernetes.io/storage-class"
	oldAnn, hasOldAnn := get(old, "metadata", "annotations", betaClass).(string)
	newAnn, hasNewAnn := get(new, "metadata", "annotations", betaClass).(string)
	oldSC, newSC := oldSpec["storageClassName"], newSpec["storageClassName"]
	newSCName, _ := newSC.(string)
	switch {
	case hasOldAnn && oldSC == nil && newSC != nil && newSCName == oldAnn && (!hasNewAnn || newAnn == oldAnn):
		delete(newSpec, "storageClassName") // upgraded from the annotation
	case newSC != nil && oldSC == nil && (!hasOldAnn || newSCName == oldAnn):
		delete(newSpec, "storageClassName") // set from nil
	}
	if getString(new, "status", "phase") == "Bound" {
		if req := getMap(newSpec, "resources", "requests"); req != nil {
			req["storage"] = get(oldSpec, "resources", "requests", "storage") // nil: kube's zero Quantity, "0"
		}
		setOrDelete(newSpec, "volumeAttributesClassName", oldSpec["volumeAttributesClassName"])
	}
	return oldSpec, newSpec
}

func setOrDelete(m map[string]any, k string, v any) {
	if v == nil {
		delete(m, k)
	} else {
		m[k] = v
	}
}

// goNumber is a stored number's value (0 when it is none).
func goNumber(v any) float64 {
	switch n := v.(type) {
	case json.Number:
		f, _ := n.Float64()
		return f
	case float64:
		return n
	case int64:
		return float64(n)
	case int:
		return float64(n)
	}
	return 0
}

// appendGo appends v written as type typ.
func appendGo(b []byte, typ string, v any) []byte {
	switch {
	case strings.HasPrefix(typ, "*"):
		if v == nil {
			return append(b, "null"...)
		}
		return appendGo(b, typ[1:], v)
	case strings.HasPrefix(typ, "[]"):
		l, ok := v.([]any)
		if !ok {
			return append(b, "null"...)
		}
		b = append(b, '[')
		for i, e := range l {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendGo(b, typ[2:], e)
		}
		return append(b, ']')
	case strings.HasPrefix(typ, "map[]"):
		m, ok := v.(map[string]any)
		if !ok {
			return append(b, "null"...)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = appendGo(b, typ[5:], m[k])
		}
		return append(b, '}')
	}
	switch typ {
	case "string":
		s, _ := v.(string)
		return appendString(b, s)
	case "bool":
		t, _ := v.(bool)
		return strconv.AppendBool(b, t)
	case "int", "float":
		return appendNumber(b, v)
	case "bytes", "Time", "MicroTime":
		if s, ok := v.(string); ok {
			return appendString(b, s)
		}
		return append(b, "null"...)
	case "Duration":
		s, ok := v.(string)
		if !ok {
			s = "0s"
		}
		return appendString(b, s)
	case "Quantity":
		s, ok := v.(string)
		if n, isNum := v.(json.Number); isNum {
			s, ok = n.String(), true
		}
		if !ok {
			return appendString(b, "0")
		}
		if c, ok := canonicalQuantity(s); ok {
			s = c
		}
		return appendString(b, s)
	case "IntOrString":
		if s, ok := v.(string); ok {
			return appendString(b, s)
		}
		return appendNumber(b, v)
	case "Raw":
		out, err := json.Marshal(v)
		if err != nil {
			return append(b, "null"...)
		}
		return append(b, out...)
	}
	fields, ok := goStructs[typ]
	if !ok {
		return append(b, "null"...) // not in the table: a bug in the caller's type name
	}
	m, _ := v.(map[string]any)
	b = append(b, '{')
	first := true
	for _, f := range fields {
		var fv any
		if f.From != "" && m != nil {
			fv = get(m, strings.Split(f.From, ".")...)
		}
		if f.Omit&1 != 0 && goEmpty(f.Type, fv) || f.Omit&2 != 0 && goZero(f.Type, fv) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendString(b, f.Key)
		b = append(b, ':')
		b = appendGo(b, f.Type, fv)
	}
	return append(b, '}')
}

// goEmpty is encoding/json's omitempty test of v written as typ: false,
// 0, "", a nil pointer, an empty slice or map; never a struct.
func goEmpty(typ string, v any) bool {
	switch {
	case strings.HasPrefix(typ, "*"):
		return v == nil
	case strings.HasPrefix(typ, "[]"):
		l, _ := v.([]any)
		return len(l) == 0
	case strings.HasPrefix(typ, "map[]"):
		m, _ := v.(map[string]any)
		return len(m) == 0
	}
	switch typ {
	case "string", "bytes":
		s, _ := v.(string)
		return s == ""
	case "bool":
		t, _ := v.(bool)
		return !t
	case "int", "float":
		return goNumber(v) == 0
	}
	return false
}

// goZero is encoding/json's omitzero test: the Go zero value, or IsZero
// (metav1.Time: unset). gen/builtin allows omitzero only where this
// knows the type.
func goZero(typ string, v any) bool {
	switch {
	case strings.HasPrefix(typ, "*"):
		return v == nil
	case strings.HasPrefix(typ, "[]"):
		_, ok := v.([]any)
		return !ok
	case strings.HasPrefix(typ, "map[]"):
		_, ok := v.(map[string]any)
		return !ok
	case typ == "Time" || typ == "MicroTime":
		_, ok := v.(string)
		return !ok
	}
	return goEmpty(typ, v)
}

// appendNumber writes a stored number as encoding/json writes it; 0
// for what is not one.
func appendNumber(b []byte, v any) []byte {
	switch n := v.(type) {
	case json.Number:
		if _, err := strconv.ParseFloat(string(n), 64); err == nil && json.Valid([]byte(n)) {
			return append(b, n...)
		}
	case float64:
		if !math.IsInf(n, 0) && !math.IsNaN(n) {
			out, _ := json.Marshal(n)
			return append(b, out...)
		}
	case int64:
		return strconv.AppendInt(b, n, 10)
	case int:
		return strconv.AppendInt(b, int64(n), 10)
	}
	return append(b, '0')
}

// appendString writes s as encoding/json does (HTML characters escaped).
func appendString(b []byte, s string) []byte {
	out, _ := json.Marshal(s)
	return append(b, out...)
}
