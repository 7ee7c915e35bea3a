package helmtest

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/release"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	releaseName = "web"
	namespace   = "apps"
)

var (
	backupsGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "backups"}
	crdsGVR    = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// state is what the chart's objects hold after a step; gone means every
// object the release owns is deleted.
type state struct {
	image, greeting, password, schedule string
	replicas                            int32
	extra                               bool
	gone                                bool
}

var (
	v1Values = map[string]any{}
	v2Values = map[string]any{
		"image":          map[string]any{"tag": "1.28"},
		"replicas":       3,
		"greeting":       "bonjour",
		"password":       "n3w-s3cret",
		"backupSchedule": "0 4 * * *",
		"extra":          true,
	}
	v1State = state{image: "nginx:1.27", replicas: 1, greeting: "hello", password: "s3cret", schedule: "0 3 * * *"}
	v2State = state{image: "nginx:1.28", replicas: 3, greeting: "bonjour", password: "n3w-s3cret", schedule: "0 4 * * *", extra: true}
)

// TestHelmLifecycle installs, upgrades, rolls back and uninstalls
// testdata/web (a Deployment, a Service, a Secret, ConfigMaps, a CRD and
// a custom resource of it) with Helm's Go SDK in its default
// configuration (the secrets driver) against the example server over
// HTTP, and checks after each step the release history Helm reads back
// from its Secrets and the objects the chart made.
func TestHelmLifecycle(t *testing.T) {
	h := newHelm(t)
	ch, err := loader.Load("testdata/web")
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}

	steps := []struct {
		name string
		run  func(*action.Configuration) (*release.Release, error)
		// wantRelease is the revision and status the step returns (zero:
		// the step returns no release).
		wantRevision int
		wantStatus   release.Status
		// wantHistory is the status of each stored revision, oldest first.
		wantHistory []release.Status
		want        state
	}{{
		name: "install",
		run: func(cfg *action.Configuration) (*release.Release, error) {
			in := action.NewInstall(cfg)
			in.ReleaseName, in.Namespace, in.CreateNamespace = releaseName, namespace, true
			return in.Run(ch, v1Values)
		},
		wantRevision: 1, wantStatus: release.StatusDeployed,
		wantHistory: []release.Status{release.StatusDeployed},
		want:        v1State,
	}, {
		name: "upgrade",
		run: func(cfg *action.Configuration) (*release.Release, error) {
			up := action.NewUpgrade(cfg)
			up.Namespace = namespace
			return up.Run(releaseName, ch, v2Values)
		},
		wantRevision: 2, wantStatus: release.StatusDeployed,
		wantHistory: []release.Status{release.StatusSuperseded, release.StatusDeployed},
		want:        v2State,
	}, {
		name: "rollback to 1",
		run: func(cfg *action.Configuration) (*release.Release, error) {
			rb := action.NewRollback(cfg)
			rb.Version = 1
			return nil, rb.Run(releaseName)
		},
		wantHistory: []release.Status{release.StatusSuperseded, release.StatusSuperseded, release.StatusDeployed},
		want:        v1State,
	}, {
		name: "uninstall",
		run: func(cfg *action.Configuration) (*release.Release, error) {
			res, err := action.NewUninstall(cfg).Run(releaseName)
			if err != nil {
				return nil, err
			}
			if res.Release.Info.Status != release.StatusUninstalled {
				return nil, fmt.Errorf("uninstall answered status %q; want %q", res.Release.Info.Status, release.StatusUninstalled)
			}
			return nil, nil
		},
		want: state{gone: true},
	}}
	for _, step := range steps {
		cfg := h.configuration(t) // a fresh one per step, as each helm command makes
		rel, err := step.run(cfg)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if step.wantRevision != 0 {
			if rel.Version != step.wantRevision || rel.Info.Status != step.wantStatus {
				t.Errorf("%s: release revision %d %q; want %d %q", step.name, rel.Version, rel.Info.Status, step.wantRevision, step.wantStatus)
			}
		}
		h.checkHistory(t, step.name, cfg, step.wantHistory)
		h.checkObjects(t, step.name, step.want)
	}
	// Helm leaves the CRDs of a chart's crds/ directory installed.
	if _, err := h.dyn.Resource(crdsGVR).Get(context.Background(), "backups.example.com", metav1.GetOptions{}); err != nil {
		t.Errorf("after uninstall: get CRD backups.example.com: %v; want it kept", err)
	}
}

// helm is the example server and what the test reads it with.
type helm struct {
	settings *cli.EnvSettings
	kube     kubernetes.Interface
	dyn      dynamic.Interface
}

func newHelm(t *testing.T) *helm {
	t.Helper()
	reg, err := server.New(server.Options{})
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	srv := httptest.NewServer(reg)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		reg.Close()
	})
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, server.Kubeconfig(srv.URL), 0o600); err != nil {
		t.Fatal(err)
	}
	// Helm's and kubectl's caches and configuration under the test's
	// directory, not the user's home.
	for _, v := range []string{"HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME", "KUBECACHEDIR"} {
		t.Setenv(v, filepath.Join(dir, strings.ToLower(v)))
	}
	t.Setenv("HELM_DRIVER", "") // the default: secrets
	settings := cli.New()
	settings.KubeConfig = kubeconfig
	settings.SetNamespace(namespace)

	cfg := &rest.Config{Host: srv.URL}
	kube, err := kubernetes.NewForConfig(cfg) // protobuf for built-in kinds
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &helm{settings: settings, kube: kube, dyn: dyn}
}

// configuration is what the helm command builds for each invocation:
// the driver named by HELM_DRIVER (unset: secrets).
func (h *helm) configuration(t *testing.T) *action.Configuration {
	t.Helper()
	cfg := new(action.Configuration)
	if err := cfg.Init(h.settings.RESTClientGetter(), h.settings.Namespace(), os.Getenv("HELM_DRIVER"), t.Logf); err != nil {
		t.Fatalf("action.Configuration.Init: %v", err)
	}
	return cfg
}

// checkHistory compares the release's stored revisions, as helm history
// reads them, and the Secrets holding them, with want.
func (h *helm) checkHistory(t *testing.T, step string, cfg *action.Configuration, want []release.Status) {
	t.Helper()
	var got []release.Status
	hist, err := action.NewHistory(cfg).Run(releaseName)
	switch {
	case err == nil:
		for i, r := range hist {
			if r.Version != i+1 {
				t.Errorf("%s: history[%d] is revision %d; want %d", step, i, r.Version, i+1)
			}
			got = append(got, r.Info.Status)
		}
	case len(want) != 0 || !strings.Contains(err.Error(), "release: not found"):
		t.Fatalf("%s: history: %v", step, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: history %v; want %v", step, got, want)
	}

	// helm list: the release in its last revision's status, or nothing
	// once uninstalled.
	list := action.NewList(cfg)
	list.All = true
	listed, err := list.Run()
	if err != nil {
		t.Fatalf("%s: list: %v", step, err)
	}
	var gotList, wantList []string
	for _, r := range listed {
		gotList = append(gotList, fmt.Sprintf("%s v%d %s", r.Name, r.Version, r.Info.Status))
	}
	if n := len(want); n > 0 {
		wantList = []string{fmt.Sprintf("%s v%d %s", releaseName, n, want[n-1])}
	}
	if !reflect.DeepEqual(gotList, wantList) {
		t.Errorf("%s: list %q; want %q", step, gotList, wantList)
	}

	// The storage Helm's secrets driver leaves: one Secret per revision,
	// of type helm.sh/release.v1, labelled with the revision's status.
	secrets, err := h.kube.CoreV1().Secrets(namespace).List(context.Background(), metav1.ListOptions{LabelSelector: "owner=helm,name=" + releaseName})
	if err != nil {
		t.Fatalf("%s: list release secrets: %v", step, err)
	}
	gotSecrets := map[string]string{}
	for _, s := range secrets.Items {
		if s.Type != "helm.sh/release.v1" || len(s.Data["release"]) == 0 {
			t.Errorf("%s: secret %s: type %q with %d bytes of release; want helm.sh/release.v1 with the release", step, s.Name, s.Type, len(s.Data["release"]))
		}
		gotSecrets[s.Name] = s.Labels["status"]
	}
	wantSecrets := map[string]string{}
	for i, st := range want {
		wantSecrets[fmt.Sprintf("sh.helm.release.v1.%s.v%d", releaseName, i+1)] = string(st)
	}
	if !reflect.DeepEqual(gotSecrets, wantSecrets) {
		t.Errorf("%s: release secrets (name: status label) %v; want %v", step, gotSecrets, wantSecrets)
	}
}

// checkObjects compares the chart's objects on the server with want.
func (h *helm) checkObjects(t *testing.T, step string, want state) {
	t.Helper()
	ctx := context.Background()
	core, apps := h.kube.CoreV1(), h.kube.AppsV1()
	name := releaseName

	dep, err := apps.Deployments(namespace).Get(ctx, name, metav1.GetOptions{})
	if gone(t, step, "deployment", err, want.gone) {
		if got := dep.Spec.Template.Spec.Containers[0].Image; got != want.image {
			t.Errorf("%s: deployment image %q; want %q", step, got, want.image)
		}
		if got := *dep.Spec.Replicas; got != want.replicas {
			t.Errorf("%s: deployment replicas %d; want %d", step, got, want.replicas)
		}
		if got := dep.Labels["app.kubernetes.io/managed-by"]; got != "Helm" {
			t.Errorf("%s: deployment label app.kubernetes.io/managed-by %q; want Helm", step, got)
		}
		if got := dep.Annotations["meta.helm.sh/release-name"]; got != releaseName {
			t.Errorf("%s: deployment annotation meta.helm.sh/release-name %q; want %q", step, got, releaseName)
		}
	}
	svc, err := core.Services(namespace).Get(ctx, name, metav1.GetOptions{})
	if gone(t, step, "service", err, want.gone) {
		if svc.Spec.ClusterIP == "" || svc.Spec.Ports[0].Port != 80 || svc.Spec.Ports[0].TargetPort.String() != "http" {
			t.Errorf("%s: service clusterIP %q ports %+v; want a clusterIP and port 80 to http", step, svc.Spec.ClusterIP, svc.Spec.Ports)
		}
	}
	sec, err := core.Secrets(namespace).Get(ctx, name+"-credentials", metav1.GetOptions{})
	if gone(t, step, "secret", err, want.gone) {
		if got := string(sec.Data["password"]); got != want.password || len(sec.Data) != 1 {
			t.Errorf("%s: secret data %q; want only password=%q", step, sec.Data, want.password)
		}
	}
	cm, err := core.ConfigMaps(namespace).Get(ctx, name+"-config", metav1.GetOptions{})
	if gone(t, step, "configmap", err, want.gone) {
		if got := cm.Data; !reflect.DeepEqual(got, map[string]string{"GREETING": want.greeting}) {
			t.Errorf("%s: configmap data %v; want GREETING=%q", step, got, want.greeting)
		}
	}
	_, err = core.ConfigMaps(namespace).Get(ctx, name+"-extra", metav1.GetOptions{})
	gone(t, step, "configmap web-extra", err, !want.extra)

	backup, err := h.dyn.Resource(backupsGVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if gone(t, step, "backup", err, want.gone) {
		if got := backup.Object["spec"].(map[string]any)["schedule"]; got != want.schedule {
			t.Errorf("%s: backup spec.schedule %v; want %q", step, got, want.schedule)
		}
	}
}

// gone checks a get's outcome against wantGone and reports whether the
// object is there to be checked further.
func gone(t *testing.T, step, what string, err error, wantGone bool) bool {
	t.Helper()
	switch {
	case wantGone && apierrors.IsNotFound(err):
		return false
	case wantGone && err == nil:
		t.Errorf("%s: %s still exists; want it deleted", step, what)
	case err != nil && !wantGone:
		t.Errorf("%s: get %s: %v", step, what, err)
	case err != nil:
		t.Errorf("%s: get %s: %v; want NotFound", step, what, err)
	}
	return err == nil
}
