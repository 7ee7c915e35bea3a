package conformance

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// manifests is what `kubectl create -f` creates.
const manifests = `apiVersion: v1
kind: Namespace
metadata:
  name: team
---
apiVersion: example.com/v1
kind: Widget
metadata:
  name: alpha
  namespace: default
spec:
  color: red
  replicas: 1
  ports:
  - name: http
    port: 80
    protocol: TCP
---
apiVersion: example.com/v1
kind: Widget
metadata:
  name: beta
  namespace: team
spec:
  color: blue
  replicas: 2
`

// writeFile writes data to a new file in a temporary directory and
// returns its path.
func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatalf("write %s: %v", name, err)
	}
	return path
}

// outputLine returns the first line of out whose first field is first, split
// into fields.
func outputLine(out, first string) []string {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == first {
			return f
		}
	}
	return nil
}

// kubectl's everyday commands against the example server.
func TestKubectl(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := newKubectl(t, e)
	ctx := testContext(t)

	t.Run("api-resources", func(t *testing.T) {
		out := k.mustRun(t, "api-resources")
		tests := []struct {
			name string
			want []string
		}{
			{name: "widgets", want: []string{"widgets", "wd", "example.com/v1", "true", "Widget"}},
			{name: "configmaps", want: []string{"configmaps", "cm", "v1", "true", "ConfigMap"}},
		}
		for _, tt := range tests {
			if got := outputLine(out, tt.name); !slices.Equal(got, tt.want) {
				t.Errorf("api-resources line for %s: got %q; want %q\noutput:\n%s", tt.name, got, tt.want, out)
			}
		}
		if got := outputLine(out, "namespaces"); len(got) < 4 || !slices.Equal(got[len(got)-3:], []string{"v1", "false", "Namespace"}) {
			t.Errorf("api-resources line for namespaces: got %q; want it to end with v1 false Namespace\noutput:\n%s", got, out)
		}
	})

	// kubectl validates by default (--validate=strict): it reads the
	// server's OpenAPI v3 and, finding the fieldValidation parameter, leaves
	// validation to the server.
	t.Run("create -f", func(t *testing.T) {
		out := k.mustRun(t, "create", "-f", writeFile(t, "widgets.yaml", manifests))
		for _, want := range []string{"namespace/team created", "widget.example.com/alpha created", "widget.example.com/beta created"} {
			if !strings.Contains(out, want) {
				t.Errorf("create -f output: got %q; want it to contain %q", out, want)
			}
		}
		if _, err := e.widgets("team").Get(ctx, "beta", metav1.GetOptions{}); err != nil {
			t.Errorf("get team/beta after kubectl create: %v", err)
		}
	})

	t.Run("create -f with default validation", func(t *testing.T) {
		w := widget("default", "delta", "red", 1, nil)
		data, err := yaml.Marshal(w.Object)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		out := k.mustRun(t, "create", "-f", writeFile(t, "delta.yaml", string(data)))
		if !strings.Contains(out, "widget.example.com/delta created") {
			t.Errorf("create -f output: got %q; want widget.example.com/delta created", out)
		}
	})

	t.Run("get -A", func(t *testing.T) {
		out := k.mustRun(t, "get", "widgets", "-A")
		if got := outputLine(out, "NAMESPACE"); len(got) < 2 || got[1] != "NAME" {
			t.Errorf("get widgets -A header: got %q; want NAMESPACE NAME ...\noutput:\n%s", got, out)
		}
		if got := outputLine(out, "default"); len(got) < 2 || got[1] != "alpha" {
			t.Errorf("get widgets -A: got line %q; want default alpha ...\noutput:\n%s", got, out)
		}
		if got := outputLine(out, "team"); len(got) < 2 || got[1] != "beta" {
			t.Errorf("get widgets -A: got line %q; want team beta ...\noutput:\n%s", got, out)
		}
	})

	t.Run("get -o yaml", func(t *testing.T) {
		out := k.mustRun(t, "get", "wd", "alpha", "-o", "yaml")
		var u unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(out), &u.Object); err != nil {
			t.Fatalf("get -o yaml: output is not YAML: %v\n%s", err, out)
		}
		if u.GetKind() != "Widget" || u.GetAPIVersion() != "example.com/v1" || u.GetName() != "alpha" || u.GetUID() == "" {
			t.Errorf("get -o yaml: got %s %s %s uid %q; want example.com/v1 Widget alpha with a uid", u.GetAPIVersion(), u.GetKind(), u.GetName(), u.GetUID())
		}
		if color := nestedString(t, &u, "spec", "color"); color != "red" {
			t.Errorf("get -o yaml spec.color: got %q; want red", color)
		}
	})

	t.Run("get --chunk-size", func(t *testing.T) {
		for _, name := range []string{"c1", "c2", "c3"} {
			e.create(t, widgetsGVR, widget("team", name, "green", 1, nil))
		}
		out := k.mustRun(t, "get", "widgets", "-n", "team", "--chunk-size=2")
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
			got = append(got, strings.Fields(line)[0])
		}
		if want := []string{"beta", "c1", "c2", "c3"}; !slices.Equal(got, want) {
			t.Errorf("get --chunk-size=2 names: got %v; want %v\noutput:\n%s", got, want, out)
		}
		pages := e.log.matching(func(r request) bool {
			q, _ := url.ParseQuery(r.Query)
			return r.Method == "GET" && r.Path == "/apis/example.com/v1/namespaces/team/widgets" && q.Get("limit") == "2"
		})
		if len(pages) != 2 || !strings.Contains(pages[1].Query, "continue=") {
			t.Errorf("list requests with limit=2: got %v; want 2, the second with a continue token", pages)
		}
	})

	t.Run("label", func(t *testing.T) {
		out := k.mustRun(t, "label", "widget", "alpha", "tier=gold")
		if !strings.Contains(out, "widget.example.com/alpha labeled") {
			t.Errorf("label output: got %q; want widget.example.com/alpha labeled", out)
		}
		out = k.mustRun(t, "get", "wd", "-l", "tier=gold", "-o", "name")
		if strings.TrimSpace(out) != "widget.example.com/alpha" {
			t.Errorf("get -l tier=gold -o name: got %q; want widget.example.com/alpha", out)
		}
	})

	patches := []struct {
		name, typ, patch string
		field            []string
		want             any
	}{
		{name: "merge", typ: "merge", patch: `{"spec":{"color":"green"}}`, field: []string{"spec", "color"}, want: "green"},
		{name: "json", typ: "json", patch: `[{"op":"replace","path":"/spec/replicas","value":4}]`, field: []string{"spec", "replicas"}, want: int64(4)},
	}
	for _, tt := range patches {
		t.Run("patch --type="+tt.name, func(t *testing.T) {
			out := k.mustRun(t, "patch", "widget", "alpha", "--type="+tt.typ, "-p", tt.patch)
			if !strings.Contains(out, "widget.example.com/alpha patched") {
				t.Errorf("patch output: got %q; want widget.example.com/alpha patched", out)
			}
			u, err := e.widgets("default").Get(ctx, "alpha", metav1.GetOptions{})
			if err != nil {
				t.Fatalf("get alpha: %v", err)
			}
			if got, _, _ := unstructured.NestedFieldNoCopy(u.Object, tt.field...); got != tt.want {
				t.Errorf("%s after patch: got %v; want %v", strings.Join(tt.field, "."), got, tt.want)
			}
		})
	}

	t.Run("scale", func(t *testing.T) {
		out := k.mustRun(t, "scale", "--replicas=3", "widget/alpha")
		if !strings.Contains(out, "widget.example.com/alpha scaled") {
			t.Errorf("scale output: got %q; want widget.example.com/alpha scaled", out)
		}
		u, err := e.widgets("default").Get(ctx, "alpha", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get alpha: %v", err)
		}
		if got, _ := nestedInt(t, u, "spec", "replicas"); got != 3 {
			t.Errorf("spec.replicas after scale: got %d; want 3", got)
		}
	})

	t.Run("delete", func(t *testing.T) {
		out := k.mustRun(t, "delete", "widget", "beta", "-n", "team")
		if !strings.Contains(out, `widget.example.com "beta" deleted`) {
			t.Errorf("delete output: got %q; want widget.example.com \"beta\" deleted", out)
		}
		if _, err := e.widgets("team").Get(ctx, "beta", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get team/beta after kubectl delete: got %v; want NotFound", err)
		}
		_, errOut, err := k.run("get", "widget", "beta", "-n", "team")
		if err == nil || !strings.Contains(errOut+err.Error(), "NotFound") && !strings.Contains(errOut+err.Error(), "not found") {
			t.Errorf("kubectl get deleted widget: got err %v stderr %q; want a not found error", err, errOut)
		}
	})

	t.Run("wait --for=delete", func(t *testing.T) {
		w := widget("default", "gamma", "red", 1, nil)
		w.SetFinalizers([]string{holdFinalizer})
		e.create(t, widgetsGVR, w)
		k.mustRun(t, "delete", "widget", "gamma", "--wait=false")

		waiting := k.start("wait", "--for=delete", "widget/gamma", "--timeout=60s")
		// kubectl wait watches the object once it has seen it still exists.
		e.log.waitFor(t, "kubectl wait's watch request", func(r request) bool {
			q, _ := url.ParseQuery(r.Query)
			return r.Path == "/apis/example.com/v1/namespaces/default/widgets" && q.Get("watch") == "true" &&
				q.Get("fieldSelector") == "metadata.name=gamma"
		})
		select {
		case <-waiting.done:
			t.Fatalf("kubectl wait ended while the finalizer still holds the object: err %v\nstdout:\n%s\nstderr:\n%s", waiting.err, waiting.out.String(), waiting.errOut.String())
		default:
		}
		if _, err := e.widgets("default").Patch(ctx, "gamma", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatalf("remove finalizer: %v", err)
		}
		if err := waiting.wait(t); err != nil {
			t.Fatalf("kubectl wait --for=delete: %v\nstderr:\n%s", err, waiting.errOut.String())
		}
		if out := waiting.out.String(); !strings.Contains(out, "widget.example.com/gamma condition met") {
			t.Errorf("kubectl wait output: got %q; want widget.example.com/gamma condition met", out)
		}
	})
}

// kubectl get -w prints the list, then every change.
func TestKubectlGetWatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := newKubectl(t, e)
	ctx := testContext(t)
	e.create(t, widgetsGVR, widget("default", "first", "red", 1, nil))

	watching := k.start("get", "widgets", "-w", "--output-watch-events", "-o", "custom-columns=EVENT:.type,NAME:.object.metadata.name,COLOR:.object.spec.color")
	watching.waitOutput(t, "first")
	// The watch starts from the list's resourceVersion: changes made now
	// are seen whether or not the watch request has reached the server.
	if _, err := e.widgets("default").Patch(ctx, "first", types.MergePatchType, []byte(`{"spec":{"color":"violet"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch: %v", err)
	}
	e.create(t, widgetsGVR, widget("default", "second", "teal", 1, nil))
	if err := e.widgets("default").Delete(ctx, "second", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	watching.waitOutput(t, "DELETED")

	// End the watch from the server side: kubectl get -w returns when its
	// stream ends.
	e.srv.CloseClientConnections()
	if err := watching.wait(t); err != nil {
		t.Errorf("kubectl get -w: %v", err)
	}
	var got [][]string
	for _, line := range strings.Split(strings.TrimSpace(watching.out.String()), "\n") {
		got = append(got, strings.Fields(line))
	}
	want := [][]string{
		{"EVENT", "NAME", "COLOR"},
		{"ADDED", "first", "red"},
		{"MODIFIED", "first", "violet"},
		{"ADDED", "second", "teal"},
		{"DELETED", "second", "teal"},
	}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("kubectl get -w output: got %q; want %q", got, want)
	}
}
