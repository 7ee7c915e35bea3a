package conformance

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/patch"
	"github.com/kapi-dev/kapi/schema"
)

// smpCorpusFile is the shape of ../patch/testdata/smp/*.yaml (see
// patch's strategic_test.go); only files with a kind are read here.
type smpCorpusFile struct {
	Kind  string `json:"kind"`
	Cases []struct {
		Description   string          `json:"description"`
		Original      json.RawMessage `json:"original"`
		Patch         json.RawMessage `json:"patch"`
		Expected      json.RawMessage `json:"expected"`
		ExpectedError string          `json:"expectedError"`
		Kube          string          `json:"kube"`
	} `json:"cases"`
}

// smpKinds are the k8s.io/api types the corpus is written against.
var smpKinds = map[string]any{
	"Pod":       corev1.Pod{},
	"Namespace": corev1.Namespace{},
	"ConfigMap": corev1.ConfigMap{},
}

// TestStrategicMergeMatchesApimachinery runs the strategic merge patch
// corpus cases written against k8s types through kapi's
// patch.StrategicMerge, with the schema schema.For derives from the Go
// type, and through apimachinery's strategicpatch.StrategicMergePatch with
// the type itself, and requires the same result (or both to fail).
func TestStrategicMergeMatchesApimachinery(t *testing.T) {
	paths, err := filepath.Glob("../patch/testdata/smp/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	ran := 0
	for _, p := range paths {
		y, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		j, err := yaml.YAMLToJSON(y)
		if err != nil {
			t.Fatal(err)
		}
		var f smpCorpusFile
		if err := json.Unmarshal(j, &f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if f.Kind == "" {
			continue
		}
		obj, ok := smpKinds[f.Kind]
		if !ok {
			t.Fatalf("%s: unknown kind %q", p, f.Kind)
		}
		s, err := schema.For(reflect.TypeOf(obj))
		if err != nil {
			t.Fatalf("schema.For(%T): %v", obj, err)
		}
		for _, c := range f.Cases {
			t.Run(filepath.Base(p)+"/"+c.Description, func(t *testing.T) {
				if strings.HasPrefix(c.Kube, "skip") {
					t.Skip(c.Kube)
				}
				ran++
				got, kerr := patch.StrategicMerge(c.Original, c.Patch, s, patch.Options{})
				want, aerr := strategicpatch.StrategicMergePatch(c.Original, c.Patch, obj)
				if c.ExpectedError != "" {
					if kerr == nil || aerr == nil {
						t.Fatalf("want errors from both; kapi: %v, apimachinery: %v", kerr, aerr)
					}
					for _, e := range []error{kerr, aerr} {
						if !strings.Contains(e.Error(), c.ExpectedError) {
							t.Errorf("error %q does not contain %q", e, c.ExpectedError)
						}
					}
					return
				}
				if kerr != nil || aerr != nil {
					t.Fatalf("kapi: %v, apimachinery: %v", kerr, aerr)
				}
				if c.Kube == "typed" {
					got, want = typedJSON(t, got, obj), typedJSON(t, want, obj)
				}
				if !sameJSONValue(t, got, want) {
					t.Errorf("kapi %s\napimachinery %s", got, want)
				}
				if !sameJSONValue(t, got, c.Expected) && c.Kube != "typed" {
					t.Errorf("kapi %s\ncorpus expects %s", got, c.Expected)
				}
			})
		}
	}
	if ran == 0 {
		t.Fatal("no corpus case ran")
	}
}

// typedJSON decodes b into a new value of obj's type and encodes it again,
// as kube-apiserver does with a patched object.
func typedJSON(t *testing.T, b []byte, obj any) []byte {
	t.Helper()
	v := reflect.New(reflect.TypeOf(obj))
	if err := json.Unmarshal(b, v.Interface()); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	out, err := json.Marshal(v.Interface())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameJSONValue(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(bytes.TrimSpace(b), &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

// TestStrategicMergeRandomMatchesApimachinery compares kapi and
// apimachinery on random pod patches: merging, deleting and replacing
// containers and nested ports, primitive finalizers with deletions, and
// $setElementOrder lists consistent with the patch.
func TestStrategicMergeRandomMatchesApimachinery(t *testing.T) {
	s, err := schema.For(reflect.TypeOf(corev1.Pod{}))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	names := []string{"a", "b", "c", "d", "e", "f"}
	fins := []string{"f1", "f2", "f3", "f4", "f5"}
	subset := func(from []string) []string {
		var out []string
		for _, i := range r.Perm(len(from)) {
			if r.IntN(2) == 0 {
				out = append(out, from[i])
			}
		}
		return out
	}
	// order interleaves keep (in its order) with a random part of others.
	order := func(keep, others []string) []string {
		var extra []string
		for _, o := range subset(others) {
			if !slicesContains(keep, o) {
				extra = append(extra, o)
			}
		}
		var out []string
		for len(keep) > 0 || len(extra) > 0 {
			if len(extra) == 0 || len(keep) > 0 && r.IntN(2) == 0 {
				out, keep = append(out, keep[0]), keep[1:]
			} else {
				out, extra = append(out, extra[0]), extra[1:]
			}
		}
		return out
	}
	ports := func(named bool) []any {
		var out []any
		for _, p := range subset([]string{"80", "81", "82"}) {
			e := map[string]any{"containerPort": json.Number(p)}
			if named {
				e["name"] = "p" + p
			}
			out = append(out, e)
		}
		return out
	}
	for i := range 3000 {
		var oc []any
		for _, n := range subset(names) {
			oc = append(oc, map[string]any{"name": n, "image": "o" + n, "ports": ports(false)})
		}
		orig := map[string]any{"metadata": map[string]any{"name": "p", "finalizers": strSlice(subset(fins))}, "spec": map[string]any{"containers": oc}}

		var pc []any
		var kept []string
		for _, n := range subset(names) {
			switch r.IntN(5) {
			case 0:
				pc = append(pc, map[string]any{"name": n, "$patch": "delete"})
			case 1:
				pc = append(pc, map[string]any{"name": n, "ports": ports(true)})
				kept = append(kept, n)
			default:
				pc = append(pc, map[string]any{"name": n, "image": "p" + n})
				kept = append(kept, n)
			}
		}
		if r.IntN(20) == 0 {
			pc = append(pc, map[string]any{"$patch": "replace"})
		}
		spec := map[string]any{"containers": pc}
		if r.IntN(2) == 0 {
			var o []any
			for _, n := range order(kept, names) {
				o = append(o, map[string]any{"name": n})
			}
			spec["$setElementOrder/containers"] = o
		}
		meta := map[string]any{}
		pf := subset(fins)
		meta["finalizers"] = strSlice(pf)
		var del []string
		for _, f := range subset(fins) {
			if !slicesContains(pf, f) {
				del = append(del, f)
			}
		}
		if len(del) > 0 {
			meta["$deleteFromPrimitiveList/finalizers"] = strSlice(del)
		}
		if r.IntN(2) == 0 {
			meta["$setElementOrder/finalizers"] = strSlice(order(pf, fins))
		}
		p := map[string]any{"metadata": meta, "spec": spec}

		ob, _ := json.Marshal(orig)
		pb, _ := json.Marshal(p)
		got, kerr := patch.StrategicMerge(ob, pb, s, patch.Options{})
		want, aerr := strategicpatch.StrategicMergePatch(ob, pb, corev1.Pod{})
		if (kerr == nil) != (aerr == nil) {
			t.Fatalf("case %d: original %s patch %s: kapi error %v, apimachinery error %v", i, ob, pb, kerr, aerr)
		}
		// Compared as kube-apiserver stores them: apimachinery keeps the
		// nulls of new entries, kapi drops them.
		if kerr == nil && !sameJSONValue(t, typedJSON(t, got, corev1.Pod{}), typedJSON(t, want, corev1.Pod{})) {
			t.Fatalf("case %d: original %s patch %s:\nkapi         %s\napimachinery %s", i, ob, pb, got, want)
		}
	}
}

func strSlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func slicesContains(s []string, v string) bool {
	for _, e := range s {
		if e == v {
			return true
		}
	}
	return false
}
