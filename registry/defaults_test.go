package registry_test

import (
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi/builtin"
	"github.com/kapi-dev/kapi/internal/jsonval"
	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/storage/memory"
)

// TestDefaultsOnlyDefaultsAlike: the schema cut down to its defaults'
// paths (what the registry defaults with) changes every object as the
// whole schema does, for the schema of every built-in kind and for
// schemas with additionalProperties beside properties, nullable nodes and
// defaults inside defaults; each is tried on objects with every property
// null, empty or absent, lists and maps of a null and of an element.
func TestDefaultsOnlyDefaultsAlike(t *testing.T) {
	r, err := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	if err := builtin.Register(r, builtin.Options{}); err != nil {
		t.Fatal(err)
	}
	schemas := registry.SchemasOf(r)
	for name, doc := range map[string]string{
		"additionalProperties without defaults": `
type: object
properties:
  a: {type: object, properties: {c: {type: integer, default: 1}}}
  e: {type: object, additionalProperties: {type: object, properties: {d: {type: string}}}}`,
		"nullable and nested defaults": `
type: object
properties:
  n: {type: object, nullable: true, default: {}, properties: {m: {type: string, default: y}}}
  l: {type: array, items: {type: object, nullable: true, properties: {k: {type: boolean, default: true}}}}
  s: {type: array, items: {type: string, default: z}}
  p: {type: object, default: {q: 1}, properties: {q: {type: integer}, r: {type: integer, default: 2}}}`,
	} {
		s, err := schema.Parse([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		schemas[name] = s
	}
	// Not a structural schema (Parse refuses it), but ApplyDefaults
	// takes it: a key of properties is not additionalProperties'.
	schemas["properties beside additionalProperties"] = &schema.Schema{Type: "object",
		Properties: map[string]*schema.Schema{
			"a": {Type: "object"},
			"b": {Type: "object", Properties: map[string]*schema.Schema{"c": {Type: "integer", Default: int64(1)}}},
		},
		AdditionalProperties: &schema.Schema{Type: "object", Properties: map[string]*schema.Schema{"d": {Type: "string", Default: "x"}}},
	}
	changed := map[string]bool{}
	for name, s := range schemas {
		d := registry.DefaultsOnly(s)
		for _, mode := range []leafMode{nullLeaves, emptyContainers, absentLeaves} {
			obj := sample(s, mode, 0)
			want, got := jsonval.Copy(obj, nil), jsonval.Copy(obj, nil)
			s.ApplyDefaults(want)
			d.ApplyDefaults(got)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s, %v: defaulted by the cut schema\n%v\nby the whole one\n%v", name, mode, got, want)
			}
			if !reflect.DeepEqual(want, obj) {
				changed[name] = true
			}
		}
	}
	// The comparison is not vacuous: defaults were filled in.
	for _, name := range []string{"deployments.apps/v1", "pods/v1", "services/v1", "properties beside additionalProperties", "nullable and nested defaults"} {
		if !changed[name] {
			t.Errorf("%s: no object was defaulted (schemas: %d)", name, len(schemas))
		}
	}
	if registry.DefaultsOnly(schemas["configmaps/v1"]) != nil {
		t.Error("configmaps/v1 has no default: its cut schema is not nil")
	}
}

type leafMode int

const (
	nullLeaves      leafMode = iota // every property present, scalars null
	emptyContainers                 // objects' properties present, objects and lists empty
	absentLeaves                    // scalar properties absent
)

func (m leafMode) String() string {
	return [...]string{"null leaves", "empty containers", "absent leaves"}[m]
}

// sample is an object of schema s: every property (to a depth of 10), a
// list of an element and a null, a map of a value and a null.
func sample(s *schema.Schema, mode leafMode, depth int) any {
	if s == nil || depth > 10 {
		return nil
	}
	switch {
	case len(s.Properties) > 0 || s.AdditionalProperties != nil || s.Type == "object":
		m := map[string]any{}
		if mode == emptyContainers && depth > 0 {
			return m
		}
		for k, p := range s.Properties {
			v := sample(p, mode, depth+1)
			if v == nil && mode == absentLeaves {
				continue
			}
			m[k] = v
		}
		if s.AdditionalProperties != nil {
			m["extra"] = sample(s.AdditionalProperties, mode, depth+1)
			m["null"] = nil
		}
		return m
	case s.Items != nil || s.Type == "array":
		if mode == emptyContainers {
			return []any{}
		}
		return []any{sample(s.Items, mode, depth+1), nil}
	}
	return nil
}

// BenchmarkDefaults fills a Deployment's defaults (as kubectl create
// deployment sends it) with its whole schema and with the schema cut down
// to its defaults' paths, as the registry does:
//
//	go test -run '^$' -bench BenchmarkDefaults -benchmem ./registry/
func BenchmarkDefaults(b *testing.B) {
	r, err := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
	if err != nil {
		b.Fatal(err)
	}
	if err := builtin.Register(r, builtin.Options{}); err != nil {
		b.Fatal(err)
	}
	s := registry.SchemasOf(r)["deployments.apps/v1"]
	obj := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "default", "labels": map[string]any{"app": "web"}},
		"spec": map[string]any{"replicas": int64(1), "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "nginx", "image": "nginx:1.27", "resources": map[string]any{}}}}}},
		"status": map[string]any{}}
	for _, tc := range []struct {
		name string
		s    *schema.Schema
	}{{"whole", s}, {"cut", registry.DefaultsOnly(s)}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tc.s.ApplyDefaults(obj) // the same walk each time: the first filled them in
			}
		})
	}
}
