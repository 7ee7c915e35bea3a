package schema

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	smd "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/kapi-dev/kapi/internal/jsonval"
)

// SMD returns the structured-merge-diff type of a whole object that s
// describes: the type server-side apply merges and tracks fields with.
//
// The conversion is kube-openapi's schemaconv applied to the OpenAPI v3
// document apiextensions-apiserver builds for a CRD version (what
// kube-apiserver's field manager uses), so managedFields match kube's:
//
//   - x-kubernetes-list-type atomic (or unset) → atomic list; set →
//     associative list of scalars; map → associative list keyed by
//     x-kubernetes-list-map-keys. Without a list type, a Go-derived
//     patchStrategy "merge" with patchMergeKey is an associative list too,
//     "retainKeys" atomic (schemaconv reads the same hints).
//   - x-kubernetes-map-type atomic → atomic map; granular (or unset) →
//     separable map.
//   - An object without properties and without additionalProperties, and
//     every object below x-kubernetes-preserve-unknown-fields, takes unknown
//     fields as "deduced" values (maps granular, lists atomic).
//   - A node without a type, and x-kubernetes-int-or-string, is untyped: any
//     scalar, an atomic list or a granular map.
//   - nullable is the type reference's Nullable.
//   - The root's metadata, and the metadata of every
//     x-kubernetes-embedded-resource, is Kubernetes' ObjectMeta (finalizers a
//     set, ownerReferences a map keyed by uid, labels and annotations
//     granular), whatever s says about metadata; apiVersion and kind are
//     strings there.
//
// A nil s (a resource without a schema) gives the deduced type kube uses for
// such resources: every map granular, every list atomic, metadata included.
// The result is immutable and safe for concurrent use; build it once per
// schema.
func (s *Schema) SMD() (typed.ParseableType, error) {
	if s == nil {
		return typed.DeducedParseableType, nil
	}
	c := &smdConverter{names: map[smdKey]string{}, out: &smd.Schema{}}
	c.out.Types = append(c.out.Types, smdMetaTypes()...)
	ref, err := c.ref(s, false, true)
	if err != nil {
		return typed.ParseableType{}, err
	}
	return typed.ParseableType{Schema: c.out, TypeRef: ref}, nil
}

// Names of the fixed types every converted schema holds.
const (
	smdUntyped    = "__untyped_atomic_"
	smdDeduced    = "__untyped_deduced_"
	smdObjectMeta = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
	smdOwnerRef   = "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference"
	smdMFEntry    = "io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry"
	smdFieldsV1   = "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1"
	smdTime       = "io.k8s.apimachinery.pkg.apis.meta.v1.Time"
)

// smdKey names one converted node: the same *Schema converts differently
// below preserve-unknown-fields and as the root.
type smdKey struct {
	s        *Schema
	preserve bool
	root     bool
}

type smdConverter struct {
	names map[smdKey]string
	out   *smd.Schema
}

func named(name string) *string { return &name }

func scalar(s smd.Scalar) *smd.Scalar { return &s }

// ref converts s to a type reference. Scalars are inlined; every list and
// map node becomes a named type (memoized by node, so shared nodes convert
// once and a recursive Go type does not recurse forever).
func (c *smdConverter) ref(s *Schema, preserve, root bool) (smd.TypeRef, error) {
	if s == nil {
		return smd.TypeRef{NamedType: named(smdDeduced)}, nil
	}
	typ := s.Type
	if s.IntOrString {
		typ = ""
	}
	switch typ {
	case "integer", "number":
		return smd.TypeRef{Inlined: smd.Atom{Scalar: scalar(smd.Numeric)}, Nullable: s.Nullable}, nil
	case "boolean":
		return smd.TypeRef{Inlined: smd.Atom{Scalar: scalar(smd.Boolean)}, Nullable: s.Nullable}, nil
	case "string":
		sc := smd.Scalar("untyped") // date-time, int-or-string, ... (schemaconv)
		if s.Format == "" || s.Format == "byte" {
			sc = smd.String
		}
		return smd.TypeRef{Inlined: smd.Atom{Scalar: &sc}, Nullable: s.Nullable}, nil
	case "", "object", "array":
	default:
		return smd.TypeRef{}, fmt.Errorf("schema: unrecognized type %q", typ)
	}
	k := smdKey{s: s, preserve: preserve || s.PreserveUnknownFields, root: root}
	if name, ok := c.names[k]; ok {
		return smd.TypeRef{NamedType: &name, Nullable: s.Nullable}, nil
	}
	name := "n" + strconv.Itoa(len(c.names))
	c.names[k] = name
	i := len(c.out.Types)
	c.out.Types = append(c.out.Types, smd.TypeDef{Name: name})
	var a smd.Atom
	var err error
	switch typ {
	case "object":
		a.Map, err = c.object(s, k.preserve, root)
	case "array":
		a.List, err = c.list(s, k.preserve)
	default: // any value
		a.Scalar = scalar("untyped")
		if a.List, err = c.list(s, k.preserve); err == nil {
			a.Map, err = c.object(s, k.preserve, root)
		}
	}
	if err != nil {
		return smd.TypeRef{}, err
	}
	c.out.Types[i].Atom = a
	return smd.TypeRef{NamedType: &name, Nullable: s.Nullable}, nil
}

func (c *smdConverter) object(s *Schema, preserve, root bool) (*smd.Map, error) {
	m := &smd.Map{}
	switch s.MapType {
	case "", "granular":
	case "atomic":
		m.ElementRelationship = smd.Atomic
	default:
		return nil, fmt.Errorf("schema: unknown map type %q", s.MapType)
	}
	meta := root || s.EmbeddedResource
	for _, name := range smdSortedKeys(s.Properties) {
		if meta && (name == "metadata" || name == "apiVersion" || name == "kind") {
			continue
		}
		p := s.Properties[name]
		t, err := c.ref(p, preserve, false)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		var def any
		if p != nil {
			def = smdDefault(p.Default)
		}
		m.Fields = append(m.Fields, smd.StructField{Name: name, Type: t, Default: def})
	}
	if meta {
		str := smd.TypeRef{Inlined: smd.Atom{Scalar: scalar(smd.String)}}
		m.Fields = append(m.Fields,
			smd.StructField{Name: "apiVersion", Type: str},
			smd.StructField{Name: "kind", Type: str},
			smd.StructField{Name: "metadata", Type: smd.TypeRef{NamedType: named(smdObjectMeta)}})
	}
	switch {
	case s.AdditionalProperties != nil:
		t, err := c.ref(s.AdditionalProperties, preserve, false)
		if err != nil {
			return nil, fmt.Errorf("additionalProperties: %w", err)
		}
		m.ElementType = t
	case preserve || len(s.Properties) == 0:
		m.ElementType = smd.TypeRef{NamedType: named(smdDeduced)}
	}
	return m, nil
}

func (c *smdConverter) list(s *Schema, preserve bool) (*smd.List, error) {
	l := &smd.List{ElementRelationship: smd.Atomic}
	switch s.ListType {
	case "atomic":
	case "set":
		l.ElementRelationship = smd.Associative
	case "map":
		if len(s.ListMapKeys) == 0 {
			return nil, fmt.Errorf("schema: list type map without x-kubernetes-list-map-keys")
		}
		l.ElementRelationship, l.Keys = smd.Associative, s.ListMapKeys
	case "":
		switch s.PatchStrategy {
		case "merge", "merge,retainKeys":
			l.ElementRelationship = smd.Associative
			if s.PatchMergeKey != "" {
				l.Keys = []string{s.PatchMergeKey}
			}
		}
	default:
		return nil, fmt.Errorf("schema: unknown list type %q", s.ListType)
	}
	if s.Items == nil {
		l.ElementType = smd.TypeRef{NamedType: named(smdUntyped)}
		return l, nil
	}
	t, err := c.ref(s.Items, preserve, false)
	if err != nil {
		return nil, fmt.Errorf("items: %w", err)
	}
	l.ElementType = t
	return l, nil
}

// withEmptyDefaults gives OwnerReference's string fields their "" default,
// as k8s.io/api's OpenAPI does (smd fills missing list-map keys with it).
func withEmptyDefaults(fs []smd.StructField) []smd.StructField {
	for i := range fs {
		if fs[i].Type.Inlined.Scalar != nil && *fs[i].Type.Inlined.Scalar == smd.String {
			fs[i].Default = ""
		}
	}
	return fs
}

func smdSortedKeys(m map[string]*Schema) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// smdDefault turns a JSON-form default into the values smd reads
// (json.Number becomes int64 or float64).
func smdDefault(v any) any { return jsonval.Copy(v, jsonval.Number) }

// smdMetaTypes are Kubernetes' ObjectMeta and the types it refers to, as
// client-go's applyconfigurations and kube-apiserver's OpenAPI describe
// them, plus schemaconv's untyped and deduced types.
func smdMetaTypes() []smd.TypeDef {
	str := smd.TypeRef{Inlined: smd.Atom{Scalar: scalar(smd.String)}}
	num := smd.TypeRef{Inlined: smd.Atom{Scalar: scalar(smd.Numeric)}}
	boolean := smd.TypeRef{Inlined: smd.Atom{Scalar: scalar(smd.Boolean)}}
	tm := smd.TypeRef{NamedType: named(smdTime)}
	strMap := smd.TypeRef{Inlined: smd.Atom{Map: &smd.Map{ElementType: str}}}
	fields := func(spec string, types map[string]smd.TypeRef) []smd.StructField {
		var out []smd.StructField
		for _, n := range strings.Fields(spec) {
			out = append(out, smd.StructField{Name: n, Type: types[n]})
		}
		return out
	}
	untypedAtom := func(elem string, rel smd.ElementRelationship) smd.Atom {
		return smd.Atom{
			Scalar: scalar("untyped"),
			List:   &smd.List{ElementType: smd.TypeRef{NamedType: named(smdUntyped)}, ElementRelationship: smd.Atomic},
			Map:    &smd.Map{ElementType: smd.TypeRef{NamedType: named(elem)}, ElementRelationship: rel},
		}
	}
	return []smd.TypeDef{
		{Name: smdUntyped, Atom: untypedAtom(smdUntyped, smd.Atomic)},
		{Name: smdDeduced, Atom: untypedAtom(smdDeduced, smd.Separable)},
		{Name: smdTime, Atom: smd.Atom{Scalar: scalar("untyped")}},
		{Name: smdFieldsV1, Atom: smd.Atom{Map: &smd.Map{ElementType: smd.TypeRef{Inlined: untypedAtom(smdDeduced, smd.Separable)}}}},
		{Name: smdObjectMeta, Atom: smd.Atom{Map: &smd.Map{Fields: fields(
			"annotations creationTimestamp deletionGracePeriodSeconds deletionTimestamp finalizers generateName generation labels managedFields name namespace ownerReferences resourceVersion selfLink uid",
			map[string]smd.TypeRef{
				"annotations": strMap, "labels": strMap,
				"creationTimestamp": tm, "deletionTimestamp": tm,
				"deletionGracePeriodSeconds": num, "generation": num,
				"finalizers": {Inlined: smd.Atom{List: &smd.List{ElementType: str, ElementRelationship: smd.Associative}}},
				"managedFields": {Inlined: smd.Atom{List: &smd.List{
					ElementType: smd.TypeRef{NamedType: named(smdMFEntry)}, ElementRelationship: smd.Atomic}}},
				"ownerReferences": {Inlined: smd.Atom{List: &smd.List{
					ElementType: smd.TypeRef{NamedType: named(smdOwnerRef)}, ElementRelationship: smd.Associative, Keys: []string{"uid"}}}},
				"generateName": str, "name": str, "namespace": str, "resourceVersion": str, "selfLink": str, "uid": str,
			})}}},
		{Name: smdOwnerRef, Atom: smd.Atom{Map: &smd.Map{ElementRelationship: smd.Atomic, Fields: withEmptyDefaults(fields(
			"apiVersion blockOwnerDeletion controller kind name uid",
			map[string]smd.TypeRef{"apiVersion": str, "blockOwnerDeletion": boolean, "controller": boolean, "kind": str, "name": str, "uid": str})),
		}},
		},
		{Name: smdMFEntry, Atom: smd.Atom{Map: &smd.Map{Fields: fields(
			"apiVersion fieldsType fieldsV1 manager operation subresource time",
			map[string]smd.TypeRef{"apiVersion": str, "fieldsType": str, "fieldsV1": {NamedType: named(smdFieldsV1)},
				"manager": str, "operation": str, "subresource": str, "time": tm})}}},
	}
}
