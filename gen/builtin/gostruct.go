package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/format"
	"path"
	"reflect"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/policy"
)

// The Go-struct table (builtin/zz_generated_gostruct.go): kube's
// validation messages print values of its internal Go types
// (k8s.io/kubernetes/pkg/apis/...) through encoding/json — Go field names
// where the internal type has no json tag, every field present, in the
// internal struct's order — and its update diffs are unified diffs of
// their indented JSON. kapi stores the versioned JSON, so the builtin
// package renders it in the internal type's shape from this table: per
// internal struct, its fields in encoding/json's order, each with the
// key encoding/json writes, where the value lives in the versioned
// object's JSON (the same-named field of the k8s.io/api type the
// conversion copies it from), its type and its omitempty/omitzero.

const goStructFile = "builtin/zz_generated_gostruct.go"

// goStructRoots are the internal types kapi's messages render, each with
// the versioned type it is converted from. The table holds every struct
// they reach.
var goStructRoots = []struct{ internal, versioned any }{
	{core.PodTemplateSpec{}, corev1.PodTemplateSpec{}},
	{core.PodSpec{}, corev1.PodSpec{}},
	{core.PersistentVolumeClaim{}, corev1.PersistentVolumeClaim{}},
	{core.PersistentVolumeClaimSpec{}, corev1.PersistentVolumeClaimSpec{}},
	{policy.PodDisruptionBudgetSpec{}, policyv1.PodDisruptionBudgetSpec{}},
	// inline in a PersistentVolume's spec: its update diff
	{core.PersistentVolumeSource{}, corev1.PersistentVolumeSource{}},
}

// goField is one field of the table (builtin's goField).
type goField struct {
	Key, From, Type string
	Omit            uint8 // 1 omitempty, 2 omitzero
}

type goStructs struct {
	fields    map[string][]goField
	versioned map[string]reflect.Type // the versioned type each struct was walked with
}

// goStructTable walks the roots.
func goStructTable() (map[string][]goField, error) {
	g := &goStructs{fields: map[string][]goField{}, versioned: map[string]reflect.Type{}}
	for _, r := range goStructRoots {
		if _, err := g.typeName(reflect.TypeOf(r.internal), reflect.TypeOf(r.versioned)); err != nil {
			return nil, err
		}
	}
	return g.fields, nil
}

var (
	quantityType = reflect.TypeOf(resource.Quantity{})
	intOrString  = reflect.TypeOf(intstr.IntOrString{})
	timeType     = reflect.TypeOf(metav1.Time{})
	microTime    = reflect.TypeOf(metav1.MicroTime{})
	durationType = reflect.TypeOf(metav1.Duration{})
	typeMeta     = reflect.TypeOf(metav1.TypeMeta{})
	fieldsV1     = reflect.TypeOf(metav1.FieldsV1{})
	marshaler    = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
)

// typeName is the table's name of internal type t, read from versioned
// type v (nil when the internal value has no versioned source).
func (g *goStructs) typeName(t, v reflect.Type) (string, error) {
	switch t {
	case quantityType:
		return "Quantity", nil
	case intOrString:
		return "IntOrString", nil
	case timeType:
		return "Time", nil
	case microTime:
		return "MicroTime", nil
	case durationType:
		return "Duration", nil
	case fieldsV1:
		return "Raw", nil
	}
	if t.Kind() != reflect.Pointer && (t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler)) {
		return "", fmt.Errorf("%v marshals itself to JSON: teach gen/builtin and builtin/gostruct.go its form", t)
	}
	if v != nil && v.Kind() == reflect.Pointer && t.Kind() != reflect.Pointer {
		v = v.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string", nil
	case reflect.Bool:
		return "bool", nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "int", nil
	case reflect.Float32, reflect.Float64:
		return "float", nil
	case reflect.Pointer:
		if v != nil && v.Kind() == reflect.Pointer {
			v = v.Elem()
		}
		n, err := g.typeName(t.Elem(), v)
		return "*" + n, err
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "bytes", nil
		}
		n, err := g.typeName(t.Elem(), elem(v, reflect.Slice))
		return "[]" + n, err
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return "", fmt.Errorf("%v: only string-keyed maps are rendered", t)
		}
		n, err := g.typeName(t.Elem(), elem(v, reflect.Map))
		return "map[]" + n, err
	case reflect.Struct:
		name := path.Base(t.PkgPath()) + "." + t.Name()
		if t.PkgPath() == "k8s.io/apimachinery/pkg/apis/meta/v1" {
			name = "meta." + t.Name()
		}
		if prev, ok := g.versioned[name]; ok {
			if prev != v && v != nil && prev != nil {
				return "", fmt.Errorf("%s is converted from both %v and %v", name, prev, v)
			}
			return name, nil
		}
		g.versioned[name] = v
		g.fields[name] = nil
		fields, err := g.structFields(t, v, "")
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		seen := map[string]bool{}
		for _, f := range fields {
			if seen[f.Key] {
				return "", fmt.Errorf("%s: two fields write %q", name, f.Key)
			}
			seen[f.Key] = true
		}
		g.fields[name] = fields
		return name, nil
	}
	return "", fmt.Errorf("%v: kind %v is not rendered", t, t.Kind())
}

func elem(v reflect.Type, k reflect.Kind) reflect.Type {
	if v == nil || v.Kind() != k {
		return nil
	}
	return v.Elem()
}

// structFields is t's fields as encoding/json writes them (embedded
// structs without a json name flattened), each read from v's field of
// the same Go name under prefix.
func (g *goStructs) structFields(t, v reflect.Type, prefix string) ([]goField, error) {
	var out []goField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		var vf reflect.StructField
		found := false
		if v != nil && !(f.Anonymous && f.Type == typeMeta) {
			// Only a direct field: a promoted one lives elsewhere in
			// the JSON. Conversions never copy an embedded TypeMeta.
			vf, found = v.FieldByName(f.Name)
			found = found && len(vf.Index) == 1
		}
		from := ""
		var vt reflect.Type
		if found {
			from = jsonName(vf)
			vt = vf.Type
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				return nil, fmt.Errorf("embedded pointer %v is not rendered", ft)
			}
			if ft.Kind() == reflect.Struct {
				sub := prefix
				if found && from != "" {
					sub = prefix + from + "."
				}
				if !found {
					vt = nil
				}
				inner, err := g.structFields(ft, vt, sub)
				if err != nil {
					return nil, err
				}
				out = append(out, inner...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		key := name
		if key == "" {
			key = f.Name
		}
		typ, err := g.typeName(f.Type, vt)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		field := goField{Key: key, Type: typ}
		if from != "" {
			field.From = prefix + from
		}
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "omitempty":
				field.Omit |= 1
			case "omitzero":
				field.Omit |= 2
			case "string":
				return nil, fmt.Errorf("%s: the ,string option is not rendered", f.Name)
			}
		}
		if field.Omit&2 != 0 && !zeroKnown(typ) {
			return nil, fmt.Errorf("%s: omitzero on %s: teach builtin's goZero its zero", f.Name, typ)
		}
		out = append(out, field)
	}
	return out, nil
}

// zeroKnown reports whether builtin's goZero knows the zero of typ.
func zeroKnown(typ string) bool {
	switch typ {
	case "string", "bool", "int", "float", "bytes", "Time", "MicroTime":
		return true
	}
	return strings.HasPrefix(typ, "*") || strings.HasPrefix(typ, "[]") || strings.HasPrefix(typ, "map[]")
}

// jsonName is the key of a versioned field ("" for an inlined one).
func jsonName(f reflect.StructField) string {
	name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" && (f.Anonymous || strings.Contains(opts, "inline")) {
		return ""
	}
	if name == "" {
		return f.Name
	}
	return name
}

// goStructSource is the table as Go source.
func goStructSource(table map[string][]goField) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`// Code generated by gen/builtin from kube's internal types (k8s.io/kubernetes/pkg/apis/...) and k8s.io/api's; DO NOT EDIT.

package builtin

// goStructs are kube's internal structs that validation messages print,
// their fields in encoding/json's order: the key it writes, the path of
// the value in the versioned JSON ("" when the internal field has none),
// the type, and omitempty (1) / omitzero (2). See gostruct.go.
var goStructs = map[string][]goField{
`)
	names := make([]string, 0, len(table))
	for n := range table {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "%q: {\n", n)
		for _, f := range table[n] {
			fmt.Fprintf(&b, "{%q, %q, %q, %d},\n", f.Key, f.From, f.Type, f.Omit)
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%w\n%s", err, b.String())
	}
	return src, nil
}
