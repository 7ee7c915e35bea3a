package envtest_test

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/envtest"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var (
	crdDir    = filepath.Join("testdata", "crds")
	gadgetGVK = schema.GroupVersionKind{Group: "test.kapi.dev", Version: "v1", Kind: "Gadget"}
)

// start starts e and stops it when t ends.
func start(t testing.TB, e *envtest.Environment) *rest.Config {
	t.Helper()
	cfg, err := e.Start()
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return cfg
}

func ctxFor(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newClient(t testing.TB, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatalf("client.New: %v", err)
	}
	return c
}

func gadget(ns, name string, size int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": size}}}
	u.SetGroupVersionKind(gadgetGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// Environments started side by side are independent: each has its own
// objects, and a stopped one no longer answers.
func TestEnvironmentsInParallel(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := &envtest.Environment{CRDDirectoryPaths: []string{crdDir}}
			cfg, err := e.Start()
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			ctx := ctxFor(t)
			c := newClient(t, cfg)
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "same"}, Data: map[string]string{"env": name}}
			if err := c.Create(ctx, cm); err != nil {
				t.Fatalf("create: %v", err)
			}
			if err := c.Create(ctx, gadget("default", "same", 1)); err != nil {
				t.Fatalf("create gadget: %v", err)
			}
			var list corev1.ConfigMapList
			if err := c.List(ctx, &list, client.InNamespace("default")); err != nil {
				t.Fatalf("list: %v", err)
			}
			if len(list.Items) != 1 || list.Items[0].Data["env"] != name {
				t.Fatalf("got %d configmaps (%v); want only this environment's", len(list.Items), list.Items)
			}
			if err := e.Stop(); err != nil {
				t.Fatalf("Stop: %v", err)
			}
			if err := c.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}); err == nil {
				t.Fatalf("get after Stop succeeded; want the server gone")
			}
		})
	}
}

// Start fills in Config, KubeConfig, Scheme and the CRDs it installed,
// and the kubeconfig works as the admin.
func TestStartFillsFields(t *testing.T) {
	t.Parallel()
	e := &envtest.Environment{CRDDirectoryPaths: []string{crdDir}, ErrorIfCRDPathMissing: true}
	cfg := start(t, e)
	if e.Config != cfg || e.Scheme == nil {
		t.Fatalf("Config %p (want %p), Scheme %v", e.Config, cfg, e.Scheme)
	}
	if len(e.CRDs) != 1 || e.CRDs[0].Name != "gadgets.test.kapi.dev" {
		t.Fatalf("CRDs: got %d; want gadgets.test.kapi.dev", len(e.CRDs))
	}
	if !strings.HasPrefix(cfg.Host, "https://127.0.0.1:") || e.ControlPlane.APIServer.SecureServing.Port == "" {
		t.Fatalf("Host %q, SecureServing %+v", cfg.Host, e.ControlPlane.APIServer.SecureServing.ListenAddr)
	}
	if got := e.ControlPlane.APIURL().String(); got != cfg.Host {
		t.Fatalf("APIURL %q; want %q", got, cfg.Host)
	}
	kc, err := clientcmd.RESTConfigFromKubeConfig(e.KubeConfig)
	if err != nil {
		t.Fatalf("KubeConfig: %v", err)
	}
	cs := kubernetes.NewForConfigOrDie(kc)
	if _, err := cs.CoreV1().Namespaces().Get(ctxFor(t), "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("get namespace default through KubeConfig: %v", err)
	}
}

// controller-runtime's client in its three shapes (typed, unstructured,
// metadata) against ConfigMaps and a CRD kind, with the CRD's CEL rule
// enforced and its status subresource.
func TestClients(t *testing.T) {
	t.Parallel()
	e := &envtest.Environment{CRDDirectoryPaths: []string{crdDir}}
	cfg := start(t, e)
	c := newClient(t, cfg)
	ctx := ctxFor(t)

	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "typed"}, Data: map[string]string{"k": "v"}}); err != nil {
		t.Fatalf("typed create: %v", err)
	}
	g := gadget("default", "g1", 3)
	if err := c.Create(ctx, g); err != nil {
		t.Fatalf("unstructured create: %v", err)
	}
	tests := []struct {
		name string
		run  func() error
		want func(error) bool
	}{
		{name: "typed get", run: func() error {
			var cm corev1.ConfigMap
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "typed"}, &cm); err != nil {
				return err
			}
			if cm.Data["k"] != "v" || cm.ResourceVersion == "" {
				return errors.New("typed get: wrong object")
			}
			return nil
		}},
		{name: "unstructured status update", run: func() error {
			got := gadget("default", "g1", 0)
			if err := c.Get(ctx, client.ObjectKeyFromObject(got), got); err != nil {
				return err
			}
			if err := unstructured.SetNestedField(got.Object, int64(7), "status", "seen"); err != nil {
				return err
			}
			if err := c.Status().Update(ctx, got); err != nil {
				return err
			}
			if err := c.Get(ctx, client.ObjectKeyFromObject(got), got); err != nil {
				return err
			}
			if seen, _, _ := unstructured.NestedInt64(got.Object, "status", "seen"); seen != 7 {
				return errors.New("status.seen not stored")
			}
			return nil
		}},
		{name: "metadata list", run: func() error {
			var l metav1.PartialObjectMetadataList
			l.SetGroupVersionKind(gadgetGVK.GroupVersion().WithKind("GadgetList"))
			if err := c.List(ctx, &l, client.InNamespace("default")); err != nil {
				return err
			}
			if len(l.Items) != 1 || l.Items[0].Name != "g1" {
				return errors.New("metadata list: want g1 only")
			}
			return nil
		}},
		{name: "CEL rule refuses", run: func() error {
			return c.Create(ctx, gadget("default", "big", 11))
		}, want: apierrors.IsInvalid},
		{name: "conflict on stale resourceVersion", run: func() error {
			var cm corev1.ConfigMap
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "typed"}, &cm); err != nil {
				return err
			}
			stale := cm.DeepCopy()
			cm.Data["k"] = "w"
			if err := c.Update(ctx, &cm); err != nil {
				return err
			}
			return c.Update(ctx, stale)
		}, want: apierrors.IsConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			if tt.want == nil && err != nil {
				t.Fatalf("got %v; want success", err)
			}
			if tt.want != nil && !tt.want(err) {
				t.Fatalf("got %v; want the error the test names", err)
			}
		})
	}
}

// A user from AddUser is authenticated and authorized by RBAC with its
// groups: a group bound to a read-only role reads and may not write;
// another group may do neither.
func TestAddUserRBAC(t *testing.T) {
	t.Parallel()
	e := &envtest.Environment{}
	cfg := start(t, e)
	ctx := ctxFor(t)
	admin := newClient(t, cfg)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(admin.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "cm-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}}}))
	must(admin.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "readers"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cm-reader"},
		Subjects: []rbacv1.Subject{{Kind: "Group", APIGroup: "rbac.authorization.k8s.io", Name: "readers"}}}))
	must(admin.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x"}}))

	tests := []struct {
		name   string
		user   envtest.User
		write  bool
		status int // 0 for success
	}{
		{name: "reader reads", user: envtest.User{Name: "alice", Groups: []string{"readers"}}},
		{name: "reader may not write", user: envtest.User{Name: "alice", Groups: []string{"readers"}}, write: true, status: http.StatusForbidden},
		{name: "other group may not read", user: envtest.User{Name: "bob", Groups: []string{"others"}}, status: http.StatusForbidden},
		{name: "system:masters writes", user: envtest.User{Name: "root", Groups: []string{"system:masters"}}, write: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := e.AddUser(tt.user, &rest.Config{QPS: 100, Burst: 100})
			if err != nil {
				t.Fatalf("AddUser: %v", err)
			}
			if u.Config().BearerToken == "" || u.Config().Host != cfg.Host {
				t.Fatalf("user config: host %q, token set %v", u.Config().Host, u.Config().BearerToken != "")
			}
			c := newClient(t, u.Config())
			if tt.write {
				err = c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", GenerateName: "w-"}})
			} else {
				err = c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "x"}, &corev1.ConfigMap{})
			}
			var se apierrors.APIStatus
			switch {
			case tt.status == 0 && err != nil:
				t.Fatalf("got %v; want success", err)
			case tt.status != 0 && (!errors.As(err, &se) || int(se.Status().Code) != tt.status):
				t.Fatalf("got %v; want HTTP %d", err, tt.status)
			}
		})
	}

	t.Run("unknown token is 401", func(t *testing.T) {
		bad := rest.CopyConfig(cfg)
		bad.BearerToken = "not-a-token"
		err := newClient(t, bad).Get(ctx, client.ObjectKey{Namespace: "default", Name: "x"}, &corev1.ConfigMap{})
		if !apierrors.IsUnauthorized(err) {
			t.Fatalf("got %v; want 401", err)
		}
	})
}

// CRDs come from CRDDirectoryPaths and CRDs, merged; a missing path is
// an error with ErrorIfCRDPathMissing and skipped without.
func TestCRDInstall(t *testing.T) {
	t.Parallel()
	widgets := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.test.kapi.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "test.kapi.dev", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr(true)}}}},
		},
	}
	missing := filepath.Join("testdata", "no-such-dir")
	tests := []struct {
		name     string
		env      envtest.Environment
		wantErr  bool
		wantKind []string // kinds served (besides the built-in ones)
		notKind  []string
	}{
		{name: "directory", env: envtest.Environment{CRDDirectoryPaths: []string{crdDir}}, wantKind: []string{"Gadget"}, notKind: []string{"Widget"}},
		{name: "file", env: envtest.Environment{CRDDirectoryPaths: []string{filepath.Join(crdDir, "gadgets.test.kapi.dev.yaml")}}, wantKind: []string{"Gadget"}},
		{name: "CRDs field", env: envtest.Environment{CRDs: []*apiextensionsv1.CustomResourceDefinition{widgets}}, wantKind: []string{"Widget"}, notKind: []string{"Gadget"}},
		{name: "merged", env: envtest.Environment{CRDs: []*apiextensionsv1.CustomResourceDefinition{widgets}, CRDInstallOptions: envtest.CRDInstallOptions{Paths: []string{crdDir}}}, wantKind: []string{"Widget", "Gadget"}},
		{name: "empty directory", env: envtest.Environment{CRDDirectoryPaths: []string{filepath.Join("testdata", "empty")}, ErrorIfCRDPathMissing: true}, notKind: []string{"Gadget"}},
		{name: "missing path skipped", env: envtest.Environment{CRDDirectoryPaths: []string{missing}}, notKind: []string{"Gadget"}},
		{name: "missing path is an error", env: envtest.Environment{CRDDirectoryPaths: []string{missing}, ErrorIfCRDPathMissing: true}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := tt.env
			cfg, err := e.Start()
			if tt.wantErr {
				if err == nil {
					_ = e.Stop()
					t.Fatalf("Start succeeded; want an error")
				}
				return
			}
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			t.Cleanup(func() { _ = e.Stop() })
			c := newClient(t, cfg)
			for _, k := range tt.wantKind {
				if _, err := c.RESTMapper().RESTMapping(gadgetGVK.GroupVersion().WithKind(k).GroupKind(), "v1"); err != nil {
					t.Errorf("kind %s: %v; want served", k, err)
				}
			}
			for _, k := range tt.notKind {
				if _, err := c.RESTMapper().RESTMapping(gadgetGVK.GroupVersion().WithKind(k).GroupKind(), "v1"); err == nil {
					t.Errorf("kind %s served; want not", k)
				}
			}
			if len(e.CRDs) != len(tt.wantKind) {
				t.Errorf("Environment.CRDs: got %d; want %d", len(e.CRDs), len(tt.wantKind))
			}
		})
	}
}

// authorization-mode=AlwaysAllow among APIServer.Configure's flags lets
// any user do anything.
func TestAuthorizationModeFlag(t *testing.T) {
	t.Parallel()
	e := &envtest.Environment{}
	e.ControlPlane.GetAPIServer().Configure().Set("authorization-mode", "AlwaysAllow")
	start(t, e)
	u, err := e.AddUser(envtest.User{Name: "nobody"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := newClient(t, u.Config()).Create(ctxFor(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "y"}}); err != nil {
		t.Fatalf("create as nobody with AlwaysAllow: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }
