package conformance

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/cel"
	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/registry"
)

// crontabsCRD is the README's CRD: kubectl apply -f it, then a CronTab.
const crontabsCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: crontabs.stable.example.com}
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: crontabs, kind: CronTab, shortNames: [ct]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            description: What the cron tab runs.
            properties:
              cronSpec: {type: string, description: When it runs.}
    additionalPrinterColumns:
    - {name: Spec, type: string, jsonPath: .spec.cronSpec}
`

const crontab = `apiVersion: stable.example.com/v1
kind: CronTab
metadata: {name: every-minute}
spec: {cronSpec: "* * * * */1"}
`

var crontabsGVR = schema.GroupVersionResource{Group: "stable.example.com", Version: "v1", Resource: "crontabs"}

// EXT-7: kubectl apply -f a CRD, then at once get, create and explain its
// kind (the README's flow), list it with kubectl get crd, and delete it.
func TestKubectlApplyCRD(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	k := newKubectl(t, e)
	k.mustRun(t, "get", "cm") // fills kubectl's discovery cache before the CRD exists
	steps := []struct {
		args []string
		want []string // in stdout
	}{
		{[]string{"apply", "-f", writeFile(t, "crd.yaml", crontabsCRD)}, []string{"customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created"}},
		{[]string{"apply", "-f", writeFile(t, "ct.yaml", crontab)}, []string{"crontab.stable.example.com/every-minute created"}},
		{[]string{"get", "ct"}, []string{"NAME", "SPEC", "every-minute", "* * * * */1"}},
		{[]string{"explain", "crontabs.spec"}, []string{"KIND:", "CronTab", "What the cron tab runs.", "cronSpec\t<string>"}},
		{[]string{"get", "crd", "crontabs.stable.example.com"}, []string{"NAME", "CREATED AT", "crontabs.stable.example.com"}},
		{[]string{"wait", "--for=condition=Established", "crd/crontabs.stable.example.com", "--timeout=5s"}, []string{"condition met"}},
		{[]string{"delete", "crd", "crontabs.stable.example.com"}, []string{`customresourcedefinition.apiextensions.k8s.io "crontabs.stable.example.com" deleted`}},
	}
	for _, st := range steps {
		out := k.mustRun(t, st.args...)
		for _, w := range st.want {
			if !strings.Contains(out, w) {
				t.Errorf("kubectl %s: want %q in output:\n%s", strings.Join(st.args, " "), w, out)
			}
		}
	}
	if _, errOut, err := k.run("get", "crontabs.stable.example.com"); err == nil && !strings.Contains(errOut, "the server doesn't have a resource type") {
		t.Errorf("kubectl get crontabs after the CRD's delete: got no error (stderr %q); want the kind unknown", errOut)
	}
}

// EXT-7: a client-go dynamic informer started before the CRD exists
// syncs once it is established.
func TestDynamicInformerBeforeCRD(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := dynamicinformer.NewDynamicSharedInformerFactory(e.dyn, 0)
	inf := f.ForResource(crontabsGVR).Informer()
	added := make(chan string, 1)
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		select {
		case added <- obj.(*unstructured.Unstructured).GetName():
		default:
		}
	}}); err != nil {
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	time.Sleep(100 * time.Millisecond) // the informer's first list fails: no such resource yet
	if inf.HasSynced() {
		t.Fatal("the informer synced before the CRD exists")
	}
	k := newKubectl(t, e)
	k.mustRun(t, "apply", "-f", writeFile(t, "crd.yaml", crontabsCRD))
	if _, err := e.dyn.Resource(crontabsGVR).Namespace("default").Create(ctx, yamlObject(t, crontab), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create a CronTab: %v", err)
	}
	syncCtx, done := context.WithTimeout(ctx, 30*time.Second)
	defer done()
	if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
		t.Fatal("the informer did not sync after the CRD was established")
	}
	select {
	case name := <-added:
		if name != "every-minute" {
			t.Errorf("informer's first object: got %s; want every-minute", name)
		}
	case <-syncCtx.Done():
		t.Error("the informer did not see the CronTab")
	}
}

// EXT-7: controller-runtime's envtest CRD installer (the one every
// kubebuilder project's suite_test.go runs) against kapi's rest.Config.
func TestEnvtestInstallCRDs(t *testing.T) {
	t.Parallel()
	reg, err := server.New(withStorage(t, server.Options{Registry: registry.Options{CEL: cel.Compile}}))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvFor(t, reg)
	crds, err := envtest.InstallCRDs(e.config(), envtest.CRDInstallOptions{Paths: []string{"../schema/testdata/crds"}, ErrorIfPathMissing: true})
	if err != nil {
		t.Fatalf("envtest.InstallCRDs: %v", err)
	}
	if len(crds) != 1 || crds[0].Name != "cronjobs.batch.tutorial.kubebuilder.io" {
		t.Fatalf("installed: got %d CRDs; want cronjobs.batch.tutorial.kubebuilder.io", len(crds))
	}
	if _, err := e.dyn.Resource(cronJobsGVR).Namespace("default").Create(context.Background(), yamlObject(t, cronJobManifest("sample", "@hourly")), metav1.CreateOptions{}); err != nil {
		t.Errorf("create a CronJob after InstallCRDs: %v", err)
	}
}

// yamlObject decodes a YAML manifest.
func yamlObject(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(manifest), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}
