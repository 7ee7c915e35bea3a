package registry

import (
	"encoding/json"
	"math"
	"math/rand"
	"reflect"
	"regexp"
	"testing"
)

// TestDeepEqual checks deepEqual against reflect.DeepEqual on random
// JSON-form values and their near copies: nil and empty maps and lists,
// numbers of several Go types, NaN.
func TestDeepEqual(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	var gen func(depth int) any
	gen = func(depth int) any {
		switch n := r.Intn(14); {
		case n == 0 && depth < 3:
			m := map[string]any{}
			for i := range r.Intn(3) {
				m[string(rune('a'+i))] = gen(depth + 1)
			}
			return m
		case n == 1 && depth < 3:
			var l []any
			if r.Intn(4) > 0 {
				l = []any{}
			}
			for range r.Intn(3) {
				l = append(l, gen(depth+1))
			}
			return l
		case n == 2:
			return map[string]any(nil)
		case n == 3:
			return []any(nil)
		case n == 4:
			return nil
		case n == 5:
			return json.Number([]string{"1", "1.0", "2"}[r.Intn(3)])
		case n == 6:
			return int64(r.Intn(2))
		case n == 7:
			return []float64{1, math.NaN(), 0}[r.Intn(3)]
		case n == 8:
			return r.Intn(2) == 0
		case n == 9:
			return int(r.Intn(2))
		}
		return []string{"", "a", "b"}[r.Intn(3)]
	}
	equal := 0
	for range 20000 {
		a := gen(0)
		b := gen(0)
		if r.Intn(2) == 0 {
			b = copyJSON(a)
		}
		got, want := deepEqual(a, b), reflect.DeepEqual(a, b)
		if got != want {
			t.Fatalf("deepEqual(%#v, %#v): got %v; want %v", a, b, got, want)
		}
		if got {
			equal++
		}
	}
	if equal < 1000 {
		t.Fatalf("got %d equal pairs; want many", equal)
	}
}

// copyJSON is a deep copy of v keeping nil maps and lists nil.
func copyJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if v == nil {
			return v
		}
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = copyJSON(e)
		}
		return m
	case []any:
		if v == nil {
			return v
		}
		l := make([]any, len(v))
		for i, e := range v {
			l[i] = copyJSON(e)
		}
		return l
	}
	return v
}

func TestNewUID(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 100 {
		u := newUID()
		if !re.MatchString(u) {
			t.Fatalf("got uid %q; want a version 4 UUID in 8-4-4-4-12 hex", u)
		}
		if seen[u] {
			t.Fatalf("got uid %q twice; want each new", u)
		}
		seen[u] = true
	}
}
