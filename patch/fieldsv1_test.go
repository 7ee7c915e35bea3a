package patch_test

import (
	"math/rand"
	"reflect"
	"testing"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/kapi-dev/kapi/patch"
)

// TestManagerID checks the manager identifiers written and read without
// encoding/json against it, for plain names and names it escapes.
func TestManagerID(t *testing.T) {
	names := []string{"", "kubectl", "a b", `q"uote`, `back\slash`, "<html>&", "ünï", "\x01", "\u2028", "Apply", "v1", "example.com/v1", `","operation":"x`, "}"}
	for _, m := range names {
		for _, op := range []string{"Apply", "Update", ""} {
			for _, av := range names {
				for _, sub := range []string{"", "status", `"`} {
					id, std, back := patch.ManagerID(m, op, av, sub)
					if id != std || !back {
						t.Fatalf("%q %q %q %q: got id %s (read back: %v); want %s read back", m, op, av, sub, id, back, std)
					}
				}
			}
		}
	}
}

// TestFieldsRoundTrip checks decodeFields against smd's Set.FromJSON, and
// that a trie it calls canonical is written again as it is, on the tries
// of random widgets' field sets and on variants that are not canonical.
func TestFieldsRoundTrip(t *testing.T) {
	fm, err := patch.NewFieldManager(widgetSchema(t), "example.com/v1", patch.FieldManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(3))
	var tries []map[string]any
	for range 300 {
		f, err := patch.EncodedFieldSet(fm, oddWidget(r))
		if err != nil {
			continue
		}
		tries = append(tries, f)
	}
	odd := []func(map[string]any){
		func(m map[string]any) { m["."] = map[string]any{} },
		func(m map[string]any) { m["z:x"] = map[string]any{} },
		func(m map[string]any) { m[`k:{"port":80,"protocol":"TCP"}`] = map[string]any{} },
		func(m map[string]any) { m[`k:{"port": 80,"protocol":"TCP"}`] = map[string]any{} },
		func(m map[string]any) { m[`k:{"port":80.0,"protocol":"TCP"}`] = map[string]any{} },
		func(m map[string]any) { m[`k:{"port":8e1,"protocol":"TCP"}`] = map[string]any{} },
		func(m map[string]any) { m[`v:1.5`] = map[string]any{} },
		func(m map[string]any) { m[`v:"a"`] = map[string]any{".": map[string]any{}} },
		func(m map[string]any) { m[`i:01`] = map[string]any{} },
		func(m map[string]any) {
			m["f:x"] = map[string]any{".": map[string]any{"a": map[string]any{}}, "f:y": map[string]any{}}
		},
		func(m map[string]any) { m["f:x"] = map[string]any{"z:q": map[string]any{}} },
	}
	n := len(tries)
	for i := range n {
		for j, f := range odd {
			if (i+j)%7 != 0 {
				continue
			}
			c := canonicalKeepNumbers(t, tries[i])
			if spec, ok := c["f:spec"].(map[string]any); ok && i%2 == 0 {
				f(spec)
			} else {
				f(c)
			}
			tries = append(tries, c)
		}
	}
	canon := 0
	for _, f := range tries {
		again, ok, smdSame, err := patch.FieldsRoundTrip(f)
		if err != nil {
			t.Fatalf("%s: %v", mustJSON(f), err)
		}
		if !smdSame {
			t.Fatalf("%s: got a set smd's FromJSON does not read", mustJSON(f))
		}
		if ok {
			canon++
			if !reflect.DeepEqual(again, f) {
				t.Fatalf("got %s written again as\n%s\nyet canonical", mustJSON(f), mustJSON(again))
			}
		}
	}
	if canon < n {
		t.Fatalf("got %d canonical tries; want at least the %d field sets'", canon, n)
	}
	if canon == len(tries) {
		t.Fatalf("got every trie canonical; want the odd variants not")
	}
}

// TestPlainElement checks the path elements read without smd's JSON
// reader against it, on random keys and values, plain or not.
func TestPlainElement(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	scalars := []string{`"a"`, `"TCP"`, `""`, `"a b"`, `"<x>"`, `"q\"q"`, `"ü"`, `0`, `7`, `80`, `-5`, `-0`, `007`, `1.5`, `1e3`,
		`123456789012345`, `1234567890123456`, `true`, `false`, `null`, `{}`, `[1]`, ` 1`, `"x"x`}
	names := []string{`"a"`, `"b"`, `"port"`, `"protocol"`, `"name"`, `"a"`, `"<"`, `a`, `"q\"q"`}
	plain := 0
	for range 20000 {
		var k string
		if r.Intn(3) == 0 {
			k = "v:" + scalars[r.Intn(len(scalars))]
		} else {
			k = "k:{"
			for i := range 1 + r.Intn(3) {
				if i > 0 {
					k += []string{",", ",", ", ", ";"}[r.Intn(4)]
				}
				k += names[r.Intn(len(names))] + ":" + scalars[r.Intn(len(scalars))]
			}
			k += []string{"}", "}", "}", "} ", "", "}}"}[r.Intn(6)]
		}
		ok, same := patch.PlainElement(k)
		if ok && !same {
			t.Fatalf("%s: got an element smd reads or writes otherwise", k)
		}
		if ok {
			plain++
		}
	}
	if plain < 1000 {
		t.Fatalf("got %d plain elements; want many", plain)
	}
}

// TestPEKey checks the keys of path elements written without smd's JSON
// stream against it: keys and values of strings (plain or to escape),
// integers, floats and booleans.
func TestPEKey(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	vals := []any{"a", "TCP", "", "a b", "<x>", `q"q`, "ü", "\n", int64(0), int64(-5), int64(80), int64(1) << 62, 1.5, float64(80), true, false}
	names := []string{"a", "b", "port", "<", `q"`, "ü"}
	for range 5000 {
		var pe fieldpath.PathElement
		if r.Intn(3) == 0 {
			v := value.NewValueInterface(vals[r.Intn(len(vals))])
			pe.Value = &v
		} else {
			var key value.FieldList
			for _, n := range names {
				if r.Intn(3) == 0 {
					key = append(key, value.Field{Name: n, Value: value.NewValueInterface(vals[r.Intn(len(vals))])})
				}
			}
			if len(key) == 0 {
				continue
			}
			key.Sort()
			pe.Key = &key
		}
		if fast, smd := patch.PEKeys(pe); fast != smd {
			t.Fatalf("got key %s; want %s", fast, smd)
		}
	}
}
