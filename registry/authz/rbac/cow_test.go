package rbac

import (
	"fmt"
	"testing"
)

func TestCow(t *testing.T) {
	var m cow[string, int]
	var versions []cow[string, int]
	for i := 0; i < 1000; i++ {
		k := fmt.Sprint("k", i)
		m = m.with(hashString(k), k, i)
		versions = append(versions, m)
	}
	m = m.with(hashString("k1"), "k1", -1) // a replacement does not count
	if m.len() != 1000 {
		t.Fatalf("len: got %d; want 1000", m.len())
	}
	for i := 0; i < 1000; i += 2 {
		k := fmt.Sprint("k", i)
		m = m.without(hashString(k), k)
	}
	m = m.without(hashString("absent"), "absent")
	if m.len() != 500 {
		t.Errorf("len after deletes: got %d; want 500", m.len())
	}
	n := 0
	m.all(func(k string, v int) {
		n++
		if v%2 == 0 {
			t.Errorf("%s=%d: deleted, still there", k, v)
		}
	})
	if n != 500 {
		t.Errorf("all: got %d entries; want 500", n)
	}
	if v, ok := m.get(hashString("k1"), "k1"); !ok || v != -1 {
		t.Errorf("k1: got %d %v; want -1", v, ok)
	}
	// Earlier versions are untouched.
	for i, v := range versions {
		if v.len() != i+1 {
			t.Fatalf("version %d: len %d", i, v.len())
		}
		if got, ok := v.get(hashString("k0"), "k0"); !ok || got != 0 {
			t.Fatalf("version %d: k0 = %d %v", i, got, ok)
		}
		if _, ok := v.get(hashString(fmt.Sprint("k", i+1)), fmt.Sprint("k", i+1)); ok {
			t.Fatalf("version %d holds a later key", i)
		}
	}
	if v, _ := versions[1].get(hashString("k1"), "k1"); v != 1 {
		t.Errorf("version 1: k1 = %d; want 1", v)
	}
	for i := 1; i < 1000; i += 2 {
		k := fmt.Sprint("k", i)
		m = m.without(hashString(k), k)
	}
	if m.len() != 0 || m.shards != nil {
		t.Errorf("emptied: got %+v", m)
	}
}
