package patch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/schema"
)

// smpFile is one file of the strategic merge patch corpus in
// testdata/smp: a schema shared by its cases (OpenAPI-ish YAML, read by
// schemaOf) and the cases. Kind names the k8s.io/api type the cases are
// written against (Pod, Namespace, ConfigMap); conformance runs those
// through apimachinery's strategicpatch too.
type smpFile struct {
	Kind   string         `json:"kind"`
	Schema map[string]any `json:"schema"`
	Cases  []smpCase      `json:"cases"`
}

type smpCase struct {
	Description string          `json:"description"`
	Original    json.RawMessage `json:"original"`
	Patch       json.RawMessage `json:"patch"`
	Expected    json.RawMessage `json:"expected"`
	// ExpectedError is a substring of the error; ErrorKind its class
	// (ErrBadPatch unless set).
	ExpectedError string `json:"expectedError"`
	ErrorKind     string `json:"errorKind"`
	// Kube says how apimachinery's result differs, for conformance: ""
	// (identical), "typed" (identical once decoded into the k8s type, as
	// kube-apiserver does) or "skip: <why>".
	Kube string `json:"kube"`
}

func readCorpus(t testing.TB) map[string]smpFile {
	t.Helper()
	paths, err := filepath.Glob("testdata/smp/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	files := map[string]smpFile{}
	for _, p := range paths {
		y, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		j, err := yaml.YAMLToJSON(y)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var f smpFile
		d := json.NewDecoder(bytes.NewReader(j))
		d.DisallowUnknownFields()
		if err := d.Decode(&f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		files[filepath.Base(p)] = f
	}
	return files
}

// schemaOf builds a *schema.Schema from the few OpenAPI keywords strategic
// merge reads.
func schemaOf(m map[string]any) *schema.Schema {
	if m == nil {
		return nil
	}
	s := &schema.Schema{}
	for k, v := range m {
		switch k {
		case "type":
			s.Type = v.(string)
		case "properties":
			s.Properties = map[string]*schema.Schema{}
			for name, p := range v.(map[string]any) {
				s.Properties[name] = schemaOf(p.(map[string]any))
			}
		case "items":
			s.Items = schemaOf(v.(map[string]any))
		case "additionalProperties":
			s.AdditionalProperties = schemaOf(v.(map[string]any))
		case "x-kubernetes-patch-strategy":
			s.PatchStrategy = v.(string)
		case "x-kubernetes-patch-merge-key":
			s.PatchMergeKey = v.(string)
		case "x-kubernetes-list-type":
			s.ListType = v.(string)
		case "x-kubernetes-list-map-keys":
			for _, k := range v.([]any) {
				s.ListMapKeys = append(s.ListMapKeys, k.(string))
			}
		case "x-kubernetes-map-type":
			s.MapType = v.(string)
		default:
			panic(fmt.Sprintf("schemaOf: unknown keyword %q", k))
		}
	}
	return s
}

var errorKinds = map[string]error{"": ErrBadPatch, "ErrBadPatch": ErrBadPatch, "ErrApply": ErrApply, "ErrDocument": ErrDocument}

func TestStrategicMergeCorpus(t *testing.T) {
	for name, f := range readCorpus(t) {
		s := schemaOf(f.Schema)
		for _, c := range f.Cases {
			t.Run(name+"/"+c.Description, func(t *testing.T) {
				got, err := StrategicMerge(c.Original, c.Patch, s, Options{})
				if c.ExpectedError != "" {
					checkErr(t, err, errorKinds[c.ErrorKind], c.ExpectedError)
					return
				}
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				sameJSON(t, got, string(c.Expected))
			})
		}
	}
}

// TestStrategicMergeNoSchema: without hints objects merge and lists are
// replaced.
func TestStrategicMergeNoSchema(t *testing.T) {
	got, err := StrategicMerge([]byte(`{"a":{"b":1,"c":[1,2]},"d":1}`), []byte(`{"a":{"c":[3],"e":null},"d":null}`), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, got, `{"a":{"b":1,"c":[3]}}`)
}

// TestStrategicMergeExact: numbers are kept as written and the output is
// deterministic.
func TestStrategicMergeExact(t *testing.T) {
	orig := `{"b":12345678901234567890,"a":1.50,"l":[{"k":1e2,"v":0.1}]}`
	s := &schema.Schema{Properties: map[string]*schema.Schema{"l": {Type: "array", Ext: schema.Ext{PatchStrategy: "merge", PatchMergeKey: "k"}}}}
	want := `{"a":1.50,"b":12345678901234567890,"c":9007199254740993,"l":[{"k":1e2,"v":0.10}]}`
	for range 5 {
		got, err := StrategicMerge([]byte(orig), []byte(`{"c":9007199254740993,"l":[{"k":1e2,"v":0.10}]}`), s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Fatalf("got %s; want %s", got, want)
		}
	}
}

func TestStrategicMergeBadInput(t *testing.T) {
	tests := []struct {
		name, doc, patch string
		kind             error
		msg              string
	}{
		{"original not object", `[1]`, `{}`, ErrDocument, "not a valid JSON object"},
		{"original not json", `{`, `{}`, ErrDocument, "not a valid JSON object"},
		{"patch list", `{}`, `[1]`, ErrBadPatch, "json: cannot unmarshal array into Go value of type map[string]interface {}"},
		{"patch string", `{}`, `"x"`, ErrBadPatch, "cannot unmarshal string"},
		// A body that is not JSON: kube's patch handler's own message.
		{"patch empty", `{}`, ``, ErrBadPatch, "invalid JSON patch"},
		{"patch truncated", `{}`, `{"a":`, ErrBadPatch, "invalid JSON patch"},
		{"patch trailing", `{}`, `{} x`, ErrBadPatch, "invalid JSON patch"},
		{"patch syntax", `{}`, `{a}`, ErrBadPatch, "invalid JSON patch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := StrategicMerge([]byte(tt.doc), []byte(tt.patch), nil, Options{})
			checkErr(t, err, tt.kind, tt.msg)
		})
	}
	got, err := StrategicMerge([]byte(`{"a":1}`), []byte(`null`), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, got, `{"a":1}`)
}

// TestStrategicMergeErrorsAreTyped: every error is a *Error.
func TestStrategicMergeErrorsAreTyped(t *testing.T) {
	for name, f := range readCorpus(t) {
		for _, c := range f.Cases {
			if c.ExpectedError == "" {
				continue
			}
			_, err := StrategicMerge(c.Original, c.Patch, schemaOf(f.Schema), Options{})
			var pe *Error
			if !errors.As(err, &pe) {
				t.Errorf("%s/%s: %v is not a *Error", name, c.Description, err)
			}
		}
	}
}

func FuzzStrategicMerge(f *testing.F) {
	corpus := readCorpus(f)
	for _, file := range corpus {
		for _, c := range file.Cases {
			f.Add([]byte(c.Original), []byte(c.Patch))
		}
	}
	schemas := []*schema.Schema{nil}
	for _, name := range []string{"pod.yaml", "listmap.yaml", "lists.yaml"} {
		schemas = append(schemas, schemaOf(corpus[name].Schema))
	}
	f.Fuzz(func(t *testing.T, original, patch []byte) {
		for _, s := range schemas {
			out, err := StrategicMerge(original, patch, s, Options{})
			if err != nil {
				var pe *Error
				if !errors.As(err, &pe) {
					t.Fatalf("error %v is not a *Error", err)
				}
				continue
			}
			if !isObject(out) {
				t.Fatalf("result %q is not a JSON object", out)
			}
		}
	})
}

func BenchmarkStrategicMerge(b *testing.B) {
	pod := schemaOf(readCorpus(b)["pod.yaml"].Schema)
	for _, size := range []int{2 << 10, 100 << 10} {
		doc := benchPod(size)
		patch := []byte(`{"metadata":{"labels":{"tier":"gold"}},"spec":{"$setElementOrder/containers":[{"name":"c0"},{"name":"c1"}],"containers":[{"name":"c1","image":"nginx:2","env":[{"name":"E0","value":"x"}]}]}}`)
		merge := []byte(`{"metadata":{"labels":{"tier":"gold"}},"spec":{"nodeName":"n2"}}`)
		b.Run(fmt.Sprintf("StrategicMerge/%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if _, err := StrategicMerge(doc, patch, pod, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("MergePatch/%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if _, err := MergePatch(doc, merge, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchPod is a pod of about size bytes: containers with env variables
// and ports.
func benchPod(size int) []byte {
	var containers []any
	pod := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "p", "namespace": "default", "labels": map[string]any{"app": "web"}},
		"spec":     map[string]any{"nodeName": "n1"},
	}
	for i := 0; ; i++ {
		var env []any
		for j := range 20 {
			env = append(env, map[string]any{"name": fmt.Sprintf("E%d", j), "value": strings.Repeat("v", 20)})
		}
		containers = append(containers, map[string]any{
			"name": fmt.Sprintf("c%d", i), "image": "nginx:1", "env": env,
			"ports": []any{map[string]any{"containerPort": 80 + i, "protocol": "TCP"}},
		})
		pod["spec"].(map[string]any)["containers"] = containers
		b, _ := json.Marshal(pod)
		if len(b) >= size {
			return b
		}
	}
}

func TestStrategicMergeLongMessage(t *testing.T) {
	orig := `{"values":[` + strings.Repeat(`"abcdefgh",`, 1000) + `1]}`
	s := &schema.Schema{Properties: map[string]*schema.Schema{"values": {Type: "array", Ext: schema.Ext{PatchStrategy: "merge"}}}}
	_, err := StrategicMerge([]byte(orig), []byte(`{"values":[2]}`), s, Options{})
	checkErr(t, err, ErrBadPatch, "list element types are not identical: [[abcdefgh")
	if len(err.Error()) > maxMessage {
		t.Errorf("message of %d bytes", len(err.Error()))
	}
}
