package schema

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/kapi-dev/kapi/internal/jsontree"
)

// quickSchema has a set, a list-type map with one key and one with two.
const quickSchema = `{"type":"object","properties":{
  "set":{"type":"array","x-kubernetes-list-type":"set","items":{}},
  "one":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"],
    "items":{"type":"object","required":["k"],"properties":{"k":{"x-kubernetes-int-or-string":true}}}},
  "two":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["a","b"],
    "items":{"type":"object","required":["a","b"],"properties":{"a":{"x-kubernetes-int-or-string":true},"b":{"type":"string"}}}},
  "m":{"type":"object","additionalProperties":{"type":"array","x-kubernetes-list-type":"set","items":{}}},
  "e":{"type":"object","x-kubernetes-embedded-resource":true}}}`

func TestListsOK(t *testing.T) {
	s, err := Parse([]byte(quickSchema))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in   string
		want bool // what listsOK answers; when true, listSetsAndMaps must find nothing
	}{
		{`{"set":[1,2,"1",true,null,1.5]}`, true},
		{`{"set":[1,1]}`, false},
		{`{"set":[1,1.0]}`, true},      // int64 and float64 differ
		{`{"set":[0,-0.0,0.0]}`, true}, // identities i0, f-0, f0
		{`{"set":[-0.0,-0.0]}`, false},
		{`{"set":[{"a":1}]}`, true},
		{`{"set":[{"a":1},{"a":2}]}`, false}, // not a itemKey: left to listSetsAndMaps
		{`{"one":[{"k":"x"},{"k":"y"},{"j":1}]}`, true},
		{`{"one":[{"j":1},{"j":2}]}`, false}, // both without the key
		{`{"one":[{"k":null},{}]}`, true},
		{`{"one":[{"k":1},"x"]}`, false},
		{`{"one":[{"k":1},null]}`, true},
		{`{"two":[{"a":1,"b":"x"},{"a":1,"b":"y"},{"a":1}]}`, true},
		{`{"two":[{"a":1,"b":"x"},{"b":"x","a":1,"c":2}]}`, false},
		{`{"two":[{"a":1},{"a":1.0}]}`, false}, // the same JSON: left to listSetsAndMaps
		{`{"m":{"x":["a","b"],"y":["a","a"]}}`, false},
	} {
		var obj any
		d := json.NewDecoder(bytes.NewReader([]byte(c.in)))
		d.UseNumber()
		if err := d.Decode(&obj); err != nil {
			t.Fatal(err)
		}
		if got := listsOK(s, obj); got != c.want {
			t.Errorf("listsOK(%s): got %v; want %v", c.in, got, c.want)
		}
		checkQuick(t, s, obj)
	}
	long := make([]any, quickKeys+1)
	for i := range long {
		long[i] = int64(i)
	}
	if listsOK(s, map[string]any{"set": long}) {
		t.Errorf("listsOK of a set of %d items: got true; want false (left to listSetsAndMaps)", len(long))
	}
	if !listsOK(s, map[string]any{"set": long[:quickKeys]}) {
		t.Errorf("listsOK of a set of %d items: got false; want true", quickKeys)
	}
	for _, x := range []any{math.NaN(), math.Inf(1), []any{}, json.Number("1e400")} {
		if _, ok := toItemKey(x, false); ok {
			t.Errorf("toItemKey(%v): got ok; want not decided", x)
		}
	}
	a, _ := toItemKey("\xff", false)
	b, _ := toItemKey("\xfe", false)
	if same, ok := a.same(b, false); !ok || same {
		t.Errorf(`"\xff" same as "\xfe": got %v, %v; want false, true`, same, ok)
	}
	if _, ok := toItemKey("\xff", true); ok {
		t.Errorf(`toItemKey("\xff") as JSON: got ok; want not decided (encoding/json makes it "\ufffd")`)
	}
}

// checkQuick holds the quick checks to the full ones on obj: a check
// skipped must be one that reports nothing.
func checkQuick(t *testing.T, s *Schema, obj any) {
	t.Helper()
	if listsOK(s, obj) {
		if errs := listSetsAndMaps(s, obj, ""); len(errs) > 0 {
			t.Fatalf("listsOK(%v): got true; listSetsAndMaps reports %v", obj, errs)
		}
	}
	if !hasEmbedded(s, obj) {
		if errs := embedded(s, obj, ""); len(errs) > 0 {
			t.Fatalf("hasEmbedded(%v): got false; embedded reports %v", obj, errs)
		}
	}
}

func TestQuickOnWidget(t *testing.T) {
	s, err := Parse([]byte(widgetSchema))
	if err != nil {
		t.Fatal(err)
	}
	obj, _, err := jsontree.Decode(widgetJSON(2<<10), jsontree.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !listsOK(s, obj) || hasEmbedded(s, obj) {
		t.Errorf("widget: got listsOK %v, hasEmbedded %v; want true, false", listsOK(s, obj), hasEmbedded(s, obj))
	}
}

// FuzzQuick holds listsOK and hasEmbedded to listSetsAndMaps and
// embedded on random JSON, decoded with numbers as json.Number and as
// int64 or float64.
func FuzzQuick(f *testing.F) {
	f.Add([]byte(`{"set":[1,1.0,"1",null],"one":[{"k":1},{"k":1.0}],"two":[{"a":"x","b":2},{"a":"x"}]}`))
	f.Add([]byte(`{"spec":{"ports":[{"port":80,"protocol":"TCP","tags":["a","a"]},{"port":80}],"env":[{"name":"A"},{"name":"B"}]}}`))
	f.Add([]byte(`{"m":{"x":[[1],[1]]},"e":{"kind":"K"},"status":{"conditions":[{"type":"a"},{"type":"a"}]}}`))
	var schemas []*Schema
	for _, src := range append(fuzzSchemas, quickSchema) {
		s, err := Parse([]byte(src))
		if err != nil {
			f.Fatal(err)
		}
		schemas = append(schemas, s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, n := range []jsontree.Numbers{jsontree.Exact, jsontree.Native} {
			obj, _, err := jsontree.Decode(b, jsontree.Options{Numbers: n})
			if err != nil {
				return
			}
			for _, s := range schemas {
				checkQuick(t, s, obj)
			}
		}
	})
}
