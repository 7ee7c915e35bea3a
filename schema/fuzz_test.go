package schema

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// FuzzParse checks Parse never panics and that what it accepts survives
// JSON and Parse again unchanged. Seeds: testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"integer","default":1,"enum":[1,2]}}}`))
	f.Add([]byte("type: array\nx-kubernetes-list-type: set\nitems: {type: string}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse(b)
		if err != nil {
			return
		}
		j, err := json.Marshal(s.JSON())
		if err != nil {
			t.Fatalf("Marshal(JSON()): %v", err)
		}
		again, err := Parse(j)
		if err != nil {
			t.Fatalf("Parse(JSON()) of %s: %v", j, err)
		}
		if !reflect.DeepEqual(again, s) {
			t.Fatalf("Parse(JSON()) changed the schema:\n%s", j)
		}
	})
}

// FuzzParseCRDs checks ParseCRDs never panics. Seeds:
// testdata/fuzz/FuzzParseCRDs.
func FuzzParseCRDs(f *testing.F) {
	f.Add([]byte(goodCRD))
	f.Fuzz(func(t *testing.T, b []byte) {
		crds, err := ParseCRDs(b)
		for _, c := range crds {
			if err == nil && len(c.Versions) == 0 {
				t.Fatalf("CRD %s without versions accepted", c.Name)
			}
		}
	})
}

// FuzzParseCRD checks ParseCRD never panics, and accepts no CRD without
// versions.
func FuzzParseCRD(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","names":{"plural":"widgets","kind":"Widget"},"scope":"Namespaced","versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`))
	f.Add([]byte(`{"kind":"CustomResourceDefinition","spec":{"versions":[{}]}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCRD(b)
		if err == nil && len(c.Versions) == 0 {
			t.Fatalf("CRD %s without versions accepted", c.Name)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Fatalf("error %v does not wrap ErrInvalid", err)
		}
	})
}
