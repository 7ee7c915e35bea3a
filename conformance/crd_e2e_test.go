package conformance

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/cel"
	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/registry"
	kschema "github.com/kapi-dev/kapi/schema"
)

// URI-8, VAL-1: `kubectl explain` reads the widgets' field docs from the
// CRD's schema through the server's OpenAPI v3.
func TestKubectlExplainWidgets(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := newKubectl(t, e)

	t.Run("spec.ports", func(t *testing.T) {
		out := k.mustRun(t, "explain", "widgets.spec.ports")
		for _, want := range []string{"KIND:", "Widget", "VERSION:", "v1", "FIELD: ports <[]Object>", "Ports the widget listens on", "port\t<integer> -required-", "protocol\t<string> -required-", "name\t<string>"} {
			if !strings.Contains(out, want) {
				t.Errorf("explain widgets.spec.ports: want %q in output:\n%s", want, out)
			}
		}
	})
	t.Run("spec", func(t *testing.T) {
		out := k.mustRun(t, "explain", "widgets.spec")
		for _, want := range []string{"What the widget should be.", "color\t<string>", "The widget's color.", "replicas\t<integer>", "How many copies to run.", "ports\t<[]Object>"} {
			if !strings.Contains(out, want) {
				t.Errorf("explain widgets.spec: want %q in output:\n%s", want, out)
			}
		}
	})
}

// cronJobsGVR is the kubebuilder tutorial's CronJob.
var cronJobsGVR = schema.GroupVersionResource{Group: "batch.tutorial.kubebuilder.io", Version: "v1", Resource: "cronjobs"}

// cronJobManifest is a CronJob of the kubebuilder tutorial's CRD.
func cronJobManifest(name, schedule string) string {
	return `apiVersion: batch.tutorial.kubebuilder.io/v1
kind: CronJob
metadata:
  name: ` + name + `
spec:
  schedule: "` + schedule + `"
  suspend: false
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: hello
            image: busybox
            args: ["echo", "hello"]
            env:
            - {name: GREETING, value: hi}
            ports:
            - containerPort: 8080
`
}

// EXT-7, VAL-1: a server given the kubebuilder CronJob CRD (schema.LoadCRDs
// on the fixture directory, through server.Options.CRDs) serves it to
// discovery, `kubectl get` (the CRD's printer columns), `kubectl apply`
// and `kubectl apply --server-side`.
func TestCronJobCRD(t *testing.T) {
	t.Parallel()
	crds, err := kschema.LoadCRDs("../schema/testdata/crds")
	if err != nil {
		t.Fatalf("LoadCRDs: %v", err)
	}
	reg, err := server.New(withStorage(t, server.Options{Registry: registry.Options{CEL: cel.Compile}, CRDs: crds}))
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	e := newEnvFor(t, reg)
	k := newKubectl(t, e)

	t.Run("discovery", func(t *testing.T) {
		dc, _ := newDiscovery(t, e)
		l, err := dc.ServerResourcesForGroupVersion("batch.tutorial.kubebuilder.io/v1")
		if err != nil {
			t.Fatalf("ServerResourcesForGroupVersion: %v", err)
		}
		var found *metav1.APIResource
		for i := range l.APIResources {
			if l.APIResources[i].Name == "cronjobs" {
				found = &l.APIResources[i]
			}
		}
		if found == nil {
			t.Fatalf("resources of batch.tutorial.kubebuilder.io/v1: got %+v; want cronjobs", l.APIResources)
		}
		if found.Kind != "CronJob" || !found.Namespaced || !slices.Equal(found.ShortNames, []string{"cj"}) || !slices.Equal(found.Categories, []string{"all"}) || !slices.Contains(found.Verbs, "patch") {
			t.Errorf("cronjobs: got %+v; want kind CronJob, namespaced, short name cj, category all, verb patch", *found)
		}
		if out := k.mustRun(t, "api-resources", "--api-group=batch.tutorial.kubebuilder.io"); !slices.Equal(outputLine(out, "cronjobs"), []string{"cronjobs", "cj", "batch.tutorial.kubebuilder.io/v1", "true", "CronJob"}) {
			t.Errorf("kubectl api-resources: got %q\noutput:\n%s", outputLine(out, "cronjobs"), out)
		}
	})

	// Fully qualified: "cronjobs" and "cj" name batch/v1's built-in
	// CronJobs first, as in kube.
	const cronjobs = "cronjobs.batch.tutorial.kubebuilder.io"
	t.Run("get and apply", func(t *testing.T) {
		out, errOut, err := k.run("get", cronjobs)
		if err != nil || strings.TrimSpace(out) != "" || !strings.Contains(errOut, "No resources found in default namespace.") {
			t.Errorf("kubectl get cronjobs (none): got %v, stdout %q, stderr %q; want No resources found", err, out, errOut)
		}
		out = k.mustRun(t, "apply", "-f", writeFile(t, "cj.yaml", cronJobManifest("sample", "@hourly")))
		if !strings.Contains(out, "cronjob.batch.tutorial.kubebuilder.io/sample created") {
			t.Errorf("kubectl apply: got %q; want cronjob.batch.tutorial.kubebuilder.io/sample created", out)
		}
		out = k.mustRun(t, "get", cronjobs)
		if h := outputLine(out, "NAME"); !slices.Equal(h, []string{"NAME", "SCHEDULE", "SUSPEND", "LAST", "SCHEDULE", "AGE"}) {
			t.Errorf("kubectl get cronjobs header: got %q; want NAME SCHEDULE SUSPEND LAST SCHEDULE AGE\noutput:\n%s", h, out)
		}
		if row := outputLine(out, "sample"); len(row) < 4 || row[1] != "@hourly" || row[2] != "false" {
			t.Errorf("kubectl get cronjobs row: got %q; want sample @hourly false ...\noutput:\n%s", row, out)
		}
		out = k.mustRun(t, "get", cronjobs, "sample", "-o", "wide")
		if h := outputLine(out, "NAME"); !slices.Contains(h, "REPLICAS") {
			t.Errorf("kubectl get -o wide header: got %q; want the priority-1 column REPLICAS\noutput:\n%s", h, out)
		}
		u := getObject(t, e, cronJobsGVR, "default", "sample")
		if got := nestedString(t, u, "spec", "schedule"); got != "@hourly" {
			t.Errorf("spec.schedule: got %q; want @hourly", got)
		}
	})

	t.Run("apply --server-side", func(t *testing.T) {
		out := k.mustRun(t, "apply", "--server-side", "-f", writeFile(t, "cj.yaml", cronJobManifest("ssa", "*/5 * * * *")))
		if !strings.Contains(out, "cronjob.batch.tutorial.kubebuilder.io/ssa serverside-applied") {
			t.Errorf("kubectl apply --server-side: got %q; want cronjob.batch.tutorial.kubebuilder.io/ssa serverside-applied", out)
		}
		u := getObject(t, e, cronJobsGVR, "default", "ssa")
		mfs := u.GetManagedFields()
		if m := managedEntry(mfs, "kubectl", metav1.ManagedFieldsOperationApply); m == nil || m.APIVersion != "batch.tutorial.kubebuilder.io/v1" {
			t.Fatalf("managedFields: got%s; want an Apply entry of kubectl for batch.tutorial.kubebuilder.io/v1", managedFieldsString(mfs))
		}
		// containers is a list-map keyed by name; the container's ports a
		// list-map keyed by containerPort and protocol.
		container := []any{"spec", "jobTemplate", "spec", "template", "spec", "containers", keyByName("hello")}
		if o := owners(t, mfs, append(container, "image")...); !slices.Equal(o, []string{"kubectl/Apply"}) {
			t.Errorf("owners of the container's image: got %v; want [kubectl/Apply]%s", o, managedFieldsString(mfs))
		}
		// A second apply by another manager changing the schedule conflicts.
		_, _, err := k.run("apply", "--server-side", "--field-manager=other", "-f", writeFile(t, "cj2.yaml", cronJobManifest("ssa", "@daily")))
		if err == nil || !strings.Contains(err.Error(), `conflict with "kubectl"`) || !strings.Contains(err.Error(), ".spec.schedule") {
			t.Errorf("conflicting apply: got %v; want a conflict with kubectl on .spec.schedule", err)
		}
	})
}

// keyByName is the fieldpath key of a list-map entry keyed by name.
func keyByName(name string) any {
	return fieldpath.KeyByFields("name", name)
}
