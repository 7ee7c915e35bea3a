package conformance

import (
	"net/http"
	"os"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapi-dev/kapi/cel"
	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/registry"
	kschema "github.com/kapi-dev/kapi/schema"
)

// rulesCRD is a CRD with x-kubernetes-validations rules: a rule, a
// messageExpression, a fieldPath with a reason, an immutable field and a
// rule with optionalOldSelf.
const rulesCRD = "testdata/crds/rules.example.com.yaml"

var rulesGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "rules"}

// rulesPath is the collection path of rules in the scenario's namespace.
const rulesPath = "/apis/example.com/v1/namespaces/{ns}/rules"

func loadRulesCRD(t *testing.T) []kschema.CRD {
	t.Helper()
	b, err := os.ReadFile(rulesCRD)
	if err != nil {
		t.Fatal(err)
	}
	crds, err := kschema.ParseCRDs(b)
	if err != nil {
		t.Fatalf("ParseCRDs %s: %v", rulesCRD, err)
	}
	return crds
}

// newRulesEnv starts the example server serving the rules CRD with
// cel.Compile as the registry's CEL compiler.
func newRulesEnv(t *testing.T) *env {
	t.Helper()
	reg, err := server.New(withStorage(t, server.Options{Registry: registry.Options{CEL: cel.Compile}, CRDs: loadRulesCRD(t)}))
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	return newEnvFor(t, reg)
}

func ruleObject(name, spec string) string {
	return `{"apiVersion":"example.com/v1","kind":"Rule","metadata":{"name":"` + name + `"},"spec":` + spec + `}`
}

func ruleUnstructured(t *testing.T, ns, name string, spec map[string]any) *unstructured.Unstructured {
	t.Helper()
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Rule",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
}

// VAL-5: a rule that fails answers 422 Invalid with one cause per failed
// rule, carrying the rule's message (or evaluated messageExpression), its
// field path (fieldPath) and reason, as kube answers. Transition rules run
// on update only, optionalOldSelf rules on create too.
func TestCELRules(t *testing.T) {
	t.Parallel()
	e := newRulesEnv(t)
	ns := e.namespace(t, "cel")
	c := e.dyn.Resource(rulesGVR).Namespace(ns)
	ctx := testContext(t)

	type cause struct{ typ, field, msg string }
	check := func(t *testing.T, err error, name string, want []cause) {
		t.Helper()
		if !apierrors.IsInvalid(err) {
			t.Fatalf("got %v; want 422 Invalid", err)
		}
		st := err.(apierrors.APIStatus).Status()
		if st.Code != http.StatusUnprocessableEntity || st.Details == nil || st.Details.Kind != "Rule" || st.Details.Group != "example.com" || st.Details.Name != name {
			t.Errorf("status: got code %d, details %+v; want 422 with kind Rule, group example.com, name %s", st.Code, st.Details, name)
		}
		var got []cause
		if st.Details != nil {
			for _, c := range st.Details.Causes {
				got = append(got, cause{string(c.Type), c.Field, c.Message})
			}
		}
		if len(got) != len(want) {
			t.Fatalf("causes: got %q; want %q", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("cause %d: got %q; want %q", i, got[i], want[i])
			}
		}
	}

	if _, err := c.Create(ctx, ruleUnstructured(t, ns, "ok", map[string]any{"replicas": int64(2), "color": "red"}), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create a valid rule: %v", err)
	}

	creates := []struct {
		name string
		spec map[string]any
		want []cause
	}{
		{"color", map[string]any{"replicas": int64(1), "color": "pink"},
			[]cause{{"FieldValueInvalid", "spec.color", `Invalid value: "pink": color must be red, green or blue`}}},
		{"message-expression", map[string]any{"replicas": int64(12), "size": "large"},
			[]cause{
				{"FieldValueInvalid", "spec", "Invalid value: at most 10 replicas for size large"},
				{"FieldValueInvalid", "spec", "Invalid value: a new rule starts with at most 3 replicas"},
			}},
		{"field-path", map[string]any{"replicas": int64(1), "minReplicas": int64(2)},
			[]cause{{"FieldValueInvalid", "spec.minReplicas", "Invalid value: minReplicas must not exceed replicas"}}},
		{"reason", map[string]any{"replicas": int64(1), "owner": "me"},
			[]cause{{"FieldValueForbidden", "spec.owner", "Forbidden: owner is set by the controller"}}},
	}
	for _, tc := range creates {
		t.Run("create "+tc.name, func(t *testing.T) {
			_, err := c.Create(ctx, ruleUnstructured(t, ns, tc.name, tc.spec), metav1.CreateOptions{})
			check(t, err, tc.name, tc.want)
			if _, err := c.Get(ctx, tc.name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Errorf("get after a refused create: got %v; want NotFound", err)
			}
		})
	}

	immutable := []cause{{"FieldValueInvalid", "spec.size", `Invalid value: "large": size is immutable`}}
	t.Run("update: immutable size", func(t *testing.T) {
		u, err := c.Get(ctx, "ok", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := nestedString(t, u, "spec", "size"); got != "small" {
			t.Fatalf("spec.size: got %q; want the default small", got)
		}
		_ = unstructured.SetNestedField(u.Object, "large", "spec", "size")
		_, err = c.Update(ctx, u, metav1.UpdateOptions{})
		check(t, err, "ok", immutable)
	})
	t.Run("update: optionalOldSelf allows scaling an existing rule", func(t *testing.T) {
		u, err := c.Get(ctx, "ok", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_ = unstructured.SetNestedField(u.Object, int64(5), "spec", "replicas")
		if _, err := c.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update replicas to 5: %v; want it allowed (oldSelf has a value)", err)
		}
	})
	t.Run("merge patch: immutable size", func(t *testing.T) {
		_, err := c.Patch(ctx, "ok", types.MergePatchType, []byte(`{"spec":{"size":"large"}}`), metav1.PatchOptions{})
		check(t, err, "ok", immutable)
	})
	t.Run("apply: immutable size", func(t *testing.T) {
		_, err := c.Patch(ctx, "ok", types.ApplyPatchType, []byte(`{"apiVersion":"example.com/v1","kind":"Rule","metadata":{"name":"ok"},"spec":{"replicas":5,"size":"large"}}`), metav1.PatchOptions{FieldManager: "test", Force: new(true)})
		check(t, err, "ok", immutable)
	})

	t.Run("kubectl", func(t *testing.T) {
		k := newKubectl(t, e)
		manifest := "apiVersion: example.com/v1\nkind: Rule\nmetadata:\n  name: k\n  namespace: " + ns + "\nspec:\n  replicas: 1\n  color: pink\n"
		_, errOut, err := k.run("apply", "-f", writeFile(t, "rule.yaml", manifest))
		want := `The Rule "k" is invalid: spec.color: Invalid value: "pink": color must be red, green or blue`
		if err == nil || !strings.Contains(err.Error()+errOut, want) {
			t.Errorf("kubectl apply: got %v, stderr %q; want %q", err, errOut, want)
		}
		manifest = strings.Replace(manifest, "pink", "pink\n  owner: me\n  minReplicas: 2", 1)
		_, errOut, err = k.run("create", "-f", writeFile(t, "rule.yaml", manifest))
		for _, w := range []string{`The Rule "k" is invalid: `, `* spec.color: Invalid value: "pink": color must be red, green or blue`, `* spec.minReplicas: Invalid value: minReplicas must not exceed replicas`, `* spec.owner: Forbidden: owner is set by the controller`} {
			if err == nil || !strings.Contains(err.Error()+errOut, w) {
				t.Errorf("kubectl create: got %v, stderr %q; want %q", err, errOut, w)
			}
		}
	})
}

// VAL-5 against the reference: the same requests to kapi (with
// cel.Compile) and to k8s.io/apiextensions-apiserver give the same status,
// message and causes.
func TestCompareCELRules(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(rulesCRD)
	if err != nil {
		t.Fatal(err)
	}
	kube := kubeServer(t)
	installCRD(t, kube, string(b))
	c := &comparison{kapi: newRulesEnv(t), kube: kube}
	post := func(body string) kreq {
		return kreq{Method: http.MethodPost, Path: rulesPath, ContentType: "application/json", Body: body}
	}
	patch := func(name, ct, body string) kreq {
		return kreq{Method: http.MethodPatch, Path: rulesPath + "/" + name, ContentType: ct, Body: body}
	}
	create := func(name, spec string) step {
		return step{req: post(ruleObject(name, spec)), want: http.StatusCreated}
	}
	invalid := func(name, spec string) []step {
		return []step{{req: post(ruleObject(name, spec)), want: http.StatusUnprocessableEntity}}
	}
	c.run(t, []scenario{
		{name: "valid", steps: []step{{req: post(ruleObject("v", `{"replicas":2,"color":"red"}`)), want: http.StatusCreated, body: true}}},
		{name: "rule", steps: invalid("color", `{"replicas":1,"color":"pink"}`)},
		{name: "messageExpression and optionalOldSelf", steps: invalid("msgexpr", `{"replicas":12,"size":"large"}`)},
		{name: "fieldPath", steps: invalid("fieldpath", `{"replicas":1,"minReplicas":2}`)},
		{name: "reason", steps: invalid("reason", `{"replicas":1,"owner":"me"}`)},
		{name: "many", steps: invalid("many", `{"replicas":1,"minReplicas":3,"owner":"me","color":"pink"}`)},
		{name: "schema error blocks rules", steps: invalid("blocked", `{"replicas":"one","color":"pink"}`)},
		{name: "immutable on merge patch", steps: []step{create("m", `{"replicas":1}`),
			{req: patch("m", "application/merge-patch+json", `{"spec":{"size":"large"}}`), want: http.StatusUnprocessableEntity}}},
		{name: "optionalOldSelf on update", steps: []step{create("o", `{"replicas":1}`),
			{req: patch("o", "application/merge-patch+json", `{"spec":{"replicas":5}}`), want: http.StatusOK}}},
		{name: "immutable on apply", steps: []step{create("a", `{"replicas":1}`),
			{req: kreq{Method: http.MethodPatch, Path: rulesPath + "/a", Query: "fieldManager=t&force=true", ContentType: "application/apply-patch+yaml", Body: `{"apiVersion":"example.com/v1","kind":"Rule","metadata":{"name":"a"},"spec":{"replicas":1,"size":"large"}}`}, want: http.StatusUnprocessableEntity}}},
	})
}

// A registry without Options.CEL refuses a schema with rules, naming them
// and the cel module; with cel.Compile, rules that do not compile are
// refused with kube's message.
func TestCELRequiresCompiler(t *testing.T) {
	t.Parallel()
	crds := loadRulesCRD(t)
	_, err := server.New(withStorage(t, server.Options{CRDs: crds}))
	if err == nil || !strings.Contains(err.Error(), "x-kubernetes-validations") || !strings.Contains(err.Error(), "github.com/kapi-dev/kapi/cel") {
		t.Errorf("server.New without CEL: got %v; want an error naming x-kubernetes-validations and github.com/kapi-dev/kapi/cel", err)
	}

	bad := loadRulesCRD(t)
	bad[0].Versions[0].Schema.Properties["spec"].Validations[0].Rule = "self.replicas <="
	_, err = server.New(withStorage(t, server.Options{Registry: registry.Options{CEL: cel.Compile}, CRDs: bad}))
	if err == nil || !strings.Contains(err.Error(), "openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule") || !strings.Contains(err.Error(), "compilation failed") {
		t.Errorf("server.New with a rule that does not compile: got %v; want kube's compilation error naming the rule", err)
	}
}
