package conformance

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubectl in its default configuration: `create namespace` and `create
// configmap` use the typed clientset (protobuf, CODEC-3), `get` asks for
// Tables and prints the server's columns (CODEC-7).
func TestKubectlRepresentations(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := newKubectl(t, e)
	ctx := testContext(t)

	t.Run("create namespace", func(t *testing.T) {
		if out := k.mustRun(t, "create", "namespace", "demo"); !strings.Contains(out, "namespace/demo created") {
			t.Errorf("output: got %q; want namespace/demo created", out)
		}
		if _, err := e.dyn.Resource(namespacesGVR).Get(ctx, "demo", metav1.GetOptions{}); err != nil {
			t.Errorf("get namespace demo: %v", err)
		}
	})

	t.Run("create configmap", func(t *testing.T) {
		if out := k.mustRun(t, "create", "configmap", "c", "--from-literal=a=b"); !strings.Contains(out, "configmap/c created") {
			t.Errorf("output: got %q; want configmap/c created", out)
		}
		cm, err := e.configMaps("default").Get(ctx, "c", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get configmap c: %v", err)
		}
		if got := nestedString(t, cm, "data", "a"); got != "b" {
			t.Errorf("data.a: got %q; want b", got)
		}
	})

	t.Run("create configmap --dry-run=server", func(t *testing.T) {
		out := k.mustRun(t, "create", "configmap", "d", "--from-literal=a=b", "--dry-run=server")
		if !strings.Contains(out, "configmap/d created (server dry run)") {
			t.Errorf("output: got %q; want configmap/d created (server dry run)", out)
		}
		if _, err := e.configMaps("default").Get(ctx, "d", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get configmap d after a server dry run: got %v; want NotFound", err)
		}
	})

	// The creates above went through the typed clientset: protobuf.
	checkAnswered(t, e.log, func(r request) bool {
		return r.Method == http.MethodPost && (r.Path == "/api/v1/namespaces" || r.Path == "/api/v1/namespaces/default/configmaps")
	}, ctProtobuf, "")

	w := widget("default", "w1", "red", 2, nil)
	w = e.create(t, widgetsGVR, w)
	w.Object["status"] = map[string]any{"readyReplicas": int64(1)}
	if _, err := e.widgets("default").UpdateStatus(ctx, w, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update status: %v", err)
	}

	tests := []struct {
		name   string
		args   []string
		header string
		row    []string // the row's leading fields; Age follows
	}{
		{"widgets", []string{"get", "wd"}, "NAME   COLOR   REPLICAS   AGE", []string{"w1", "red", "2"}},
		{"widgets wide", []string{"get", "wd", "-o", "wide"}, "NAME   COLOR   REPLICAS   READY   AGE", []string{"w1", "red", "2", "1"}},
		{"configmaps", []string{"get", "cm"}, "NAME   DATA   AGE", []string{"c", "1"}},
		{"namespaces", []string{"get", "ns"}, "NAME      STATUS   AGE", []string{"demo", "Active"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out := k.mustRun(t, tt.args...)
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			if got := strings.TrimRight(lines[0], " "); got != tt.header {
				t.Errorf("header: got %q; want %q\noutput:\n%s", got, tt.header, out)
			}
			want := strings.Fields(tt.header)
			row := outputLine(out, tt.row[0])
			if len(row) != len(want) || !slices.Equal(row[:len(tt.row)], tt.row) {
				t.Errorf("row for %s: got %q; want %q then the age\noutput:\n%s", tt.row[0], row, tt.row, out)
			}
		})
	}
	// kubectl get asked for Tables, and got them.
	tables := e.log.matching(func(r request) bool {
		return r.Method == http.MethodGet && strings.Contains(r.Accept, "as=Table") && r.Status == http.StatusOK
	})
	if len(tables) < len(tests) {
		t.Errorf("Table requests answered 200: got %v; want one per kubectl get", tables)
	}
}
