package conformance

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/registry/admission"
)

// Go admission hooks (EXT-2, DRY-2, EXT-4) as client-go's typed client
// (protobuf) and kubectl see them: a mutating hook's change is stored and
// returned, a denying hook's refusal is kube's 403, a hook's warning is a
// Warning header, dry run runs the hooks and stores nothing, and a hook
// with side effects refuses dry run.
func TestGoAdmissionHooks(t *testing.T) {
	configmaps := []admission.Rule{{Operations: []admission.Operation{admission.Create, admission.Update}, Resources: []string{"configmaps"}}}
	label := &admission.Hook{HookName: "labeller", Rules: configmaps, Mutate: func(_ context.Context, a *admission.Attributes) error {
		md, _ := a.Object["metadata"].(map[string]any)
		labels, _ := md["labels"].(map[string]any)
		if labels == nil {
			labels = map[string]any{}
			md["labels"] = labels
		}
		labels["admitted-by"] = "labeller"
		return nil
	}}
	deny := &admission.Hook{HookName: "namer", Rules: configmaps, Check: func(_ context.Context, a *admission.Attributes) error {
		if strings.HasPrefix(a.Name, "forbidden-") {
			return errors.New("names starting with forbidden- are not allowed")
		}
		if strings.HasPrefix(a.Name, "warn-") {
			a.AddWarning("names starting with warn- are discouraged")
		}
		return nil
	}}
	audit := &admission.Hook{HookName: "auditor", SideEffects: true, Rules: []admission.Rule{{Resources: []string{"widgets"}}},
		Check: func(context.Context, *admission.Attributes) error { return nil }}
	reg, err := server.New(withStorage(t, server.Options{Registry: registry.Options{Admission: admission.Chain{
		Mutating: []admission.Mutator{label}, Validating: []admission.Validator{deny, audit}}}}))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvFor(t, reg)
	k := newKubectl(t, e)
	ctx := testContext(t)
	cs, err := kubernetes.NewForConfig(e.config())
	if err != nil {
		t.Fatal(err)
	}

	t.Run("typed client", func(t *testing.T) {
		got, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "typed"}}, metav1.CreateOptions{})
		if err != nil || got.Labels["admitted-by"] != "labeller" {
			t.Fatalf("create: got %v, %v; want the hook's label", got, err)
		}
		_, err = cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "forbidden-typed"}}, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) || err.Error() != `configmaps "forbidden-typed" is forbidden: names starting with forbidden- are not allowed` {
			t.Errorf("denied create: got %v", err)
		}
		if got := e.log.matching(func(r request) bool { return r.Method == "POST" && strings.HasSuffix(r.Path, "/configmaps") }); len(got) == 0 || got[0].ContentType != "application/vnd.kubernetes.protobuf" {
			t.Errorf("the typed client's creates: %v; want protobuf", got)
		}
	})
	t.Run("kubectl", func(t *testing.T) {
		k.mustRun(t, "create", "configmap", "plain", "--from-literal=a=b")
		if out := k.mustRun(t, "get", "configmap", "plain", "-o", "jsonpath={.metadata.labels.admitted-by}"); out != "labeller" {
			t.Errorf("stored label: got %q", out)
		}
		_, stderr, err := k.run("create", "configmap", "forbidden-one")
		if err == nil || !strings.Contains(err.Error()+stderr, `failed to create configmap: configmaps "forbidden-one" is forbidden: names starting with forbidden- are not allowed`) {
			t.Errorf("denied: got %v %s", err, stderr)
		}
		_, stderr, err = k.run("create", "configmap", "warn-one")
		if err != nil || !strings.Contains(stderr, "Warning: names starting with warn- are discouraged") {
			t.Errorf("warning: got %v, stderr %q", err, stderr)
		}
	})
	t.Run("dry run", func(t *testing.T) {
		out := k.mustRun(t, "create", "configmap", "dry", "--dry-run=server", "-o", "jsonpath={.metadata.labels.admitted-by}")
		if out != "labeller" {
			t.Errorf("dry-run create: got %q; want the hook's label", out)
		}
		if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("a dry run stored the object: %v", err)
		}
		_, stderr, err := k.run("create", "configmap", "forbidden-dry", "--dry-run=server")
		if err == nil || !strings.Contains(err.Error()+stderr, "is forbidden: names starting with forbidden- are not allowed") {
			t.Errorf("dry-run denied: got %v %s", err, stderr)
		}
		w := widget("default", "side", "red", 1, nil)
		_, err = e.widgets("default").Create(ctx, w, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), `admission webhook "auditor" does not support dry run`) {
			t.Errorf("dry run through a hook with side effects: got %v; want 400", err)
		}
		if _, err := e.widgets("default").Create(ctx, w, metav1.CreateOptions{}); err != nil {
			t.Errorf("the same create without dry run: %v", err)
		}
	})
}
