package conformance

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// newDiscovery returns a discovery client for e that records its requests.
func newDiscovery(t *testing.T, e *env) (*discovery.DiscoveryClient, *requestLog) {
	t.Helper()
	cfg := e.config()
	log := recordClientRequests(cfg)
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatalf("NewDiscoveryClientForConfig: %v", err)
	}
	return dc, log
}

// findResource returns the named resource of a group version's list.
func findResource(lists []*metav1.APIResourceList, gv, name string) (metav1.APIResource, bool) {
	for _, l := range lists {
		if l.GroupVersion != gv {
			continue
		}
		for _, r := range l.APIResources {
			if r.Name == name {
				return r, true
			}
		}
	}
	return metav1.APIResource{}, false
}

// URI-4: client-go's ServerGroupsAndResources, which asks for aggregated
// discovery (v2) first.
func TestDiscoveryGroupsAndResources(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dc, log := newDiscovery(t, e)

	groups, lists, err := dc.ServerGroupsAndResources()
	if err != nil {
		t.Fatalf("ServerGroupsAndResources: %v", err)
	}

	var gotGroups []string
	for _, g := range groups {
		for _, v := range g.Versions {
			gotGroups = append(gotGroups, v.GroupVersion)
		}
	}
	for _, want := range []string{"v1", "example.com/v1"} {
		if !slices.Contains(gotGroups, want) {
			t.Errorf("group versions: got %v; want %q among them", gotGroups, want)
		}
	}

	allVerbs := []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	tests := []struct {
		gv, name, kind string
		namespaced     bool
		shortNames     []string
		verbs          []string
		// group and version, when set, are the subresource's own (kube
		// names autoscaling/v1 for scale; the scale client relies on it).
		group, version string
	}{
		{gv: "example.com/v1", name: "widgets", kind: "Widget", namespaced: true, shortNames: []string{"wd"}, verbs: allVerbs},
		{gv: "example.com/v1", name: "widgets/status", kind: "Widget", namespaced: true, verbs: []string{"get", "patch", "update"}},
		{gv: "example.com/v1", name: "widgets/scale", kind: "Scale", namespaced: true, verbs: []string{"get", "patch", "update"}, group: "autoscaling", version: "v1"},
		{gv: "v1", name: "configmaps", kind: "ConfigMap", namespaced: true, shortNames: []string{"cm"}, verbs: allVerbs},
		{gv: "v1", name: "namespaces", kind: "Namespace", namespaced: false, verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"}},
	}
	for _, tt := range tests {
		t.Run(tt.gv+"/"+tt.name, func(t *testing.T) {
			r, ok := findResource(lists, tt.gv, tt.name)
			if !ok {
				t.Fatalf("resource %s in %s: not found; want it served", tt.name, tt.gv)
			}
			if r.Kind != tt.kind {
				t.Errorf("kind: got %q; want %q", r.Kind, tt.kind)
			}
			if r.Namespaced != tt.namespaced {
				t.Errorf("namespaced: got %v; want %v", r.Namespaced, tt.namespaced)
			}
			if tt.group != "" && (r.Group != tt.group || r.Version != tt.version) {
				t.Errorf("group/version: got %q/%q; want %q/%q", r.Group, r.Version, tt.group, tt.version)
			}
			for _, s := range tt.shortNames {
				if !slices.Contains(r.ShortNames, s) {
					t.Errorf("shortNames: got %v; want %q among them", r.ShortNames, s)
				}
			}
			for _, v := range tt.verbs {
				if !slices.Contains(r.Verbs, v) {
					t.Errorf("verbs: got %v; want %q among them", r.Verbs, v)
				}
			}
		})
	}

	t.Run("aggregated", func(t *testing.T) {
		var aggregated []request
		for _, r := range log.all() {
			if (r.Path == "/api" || r.Path == "/apis") && strings.Contains(r.ContentType, "as=APIGroupDiscoveryList") {
				aggregated = append(aggregated, r)
			}
		}
		if len(aggregated) != 2 {
			t.Errorf("aggregated discovery answers on /api and /apis: got %v; want 2 (requests: %v)", aggregated, log.all())
		}
		perGV := log.matching(func(r request) bool { return r.Path == "/apis/example.com/v1" })
		if len(perGV) != 0 {
			t.Errorf("requests for /apis/example.com/v1: got %v; want none (aggregated discovery carries the resources)", perGV)
		}
	})
}

// URI-4: the unaggregated documents, as older clients and the aggregator
// read them.
func TestDiscoveryUnaggregated(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dc, _ := newDiscovery(t, e)
	ctx := testContext(t)

	t.Run("ServerResourcesForGroupVersion", func(t *testing.T) {
		l, err := dc.ServerResourcesForGroupVersion("example.com/v1")
		if err != nil {
			t.Fatalf("ServerResourcesForGroupVersion: %v", err)
		}
		if _, ok := findResource([]*metav1.APIResourceList{l}, "example.com/v1", "widgets"); !ok {
			t.Errorf("resources of example.com/v1: got %+v; want widgets", l.APIResources)
		}
		if l.Kind != "APIResourceList" {
			t.Errorf("kind: got %q; want APIResourceList", l.Kind)
		}
	})

	tests := []struct {
		path, kind string
	}{
		{path: "/api", kind: "APIVersions"},
		{path: "/apis", kind: "APIGroupList"},
		{path: "/apis/example.com", kind: "APIGroup"},
		{path: "/api/v1", kind: "APIResourceList"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			body, err := dc.RESTClient().Get().AbsPath(tt.path).SetHeader("Accept", "application/json").DoRaw(ctx)
			if err != nil {
				t.Fatalf("GET %s: %v", tt.path, err)
			}
			var tm metav1.TypeMeta
			if err := json.Unmarshal(body, &tm); err != nil {
				t.Fatalf("GET %s: decoding %q: %v", tt.path, body, err)
			}
			if tm.Kind != tt.kind {
				t.Errorf("GET %s kind: got %q; want %q", tt.path, tm.Kind, tt.kind)
			}
		})
	}
}

// The RESTMapper kubectl builds from discovery resolves kinds, plurals,
// singulars and short names.
func TestRESTMapper(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dc, _ := newDiscovery(t, e)
	cached := memory.NewMemCacheClient(dc)
	mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(cached), cached, nil)

	tests := []struct {
		resource     string
		wantKind     schema.GroupVersionKind
		wantResource string
		wantScope    string
	}{
		{resource: "widgets", wantKind: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, wantResource: "widgets", wantScope: "namespace"},
		{resource: "widget", wantKind: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, wantResource: "widgets", wantScope: "namespace"},
		{resource: "Widget", wantKind: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, wantResource: "widgets", wantScope: "namespace"},
		{resource: "wd", wantKind: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, wantResource: "widgets", wantScope: "namespace"},
		{resource: "widgets.example.com", wantKind: schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}, wantResource: "widgets", wantScope: "namespace"},
		{resource: "cm", wantKind: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, wantResource: "configmaps", wantScope: "namespace"},
		{resource: "configmaps", wantKind: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, wantResource: "configmaps", wantScope: "namespace"},
		{resource: "namespaces", wantKind: schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, wantResource: "namespaces", wantScope: "root"},
	}
	for _, tt := range tests {
		t.Run(tt.resource, func(t *testing.T) {
			gvr := schema.ParseGroupResource(tt.resource).WithVersion("")
			gvk, err := mapper.KindFor(gvr)
			if err != nil {
				t.Fatalf("KindFor(%v): %v", gvr, err)
			}
			if gvk != tt.wantKind {
				t.Errorf("KindFor(%v): got %v; want %v", gvr, gvk, tt.wantKind)
			}
			m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				t.Fatalf("RESTMapping(%v): %v", gvk, err)
			}
			if m.Resource.Resource != tt.wantResource {
				t.Errorf("RESTMapping(%v).Resource: got %q; want %q", gvk, m.Resource.Resource, tt.wantResource)
			}
			if got := string(m.Scope.Name()); got != tt.wantScope {
				t.Errorf("RESTMapping(%v).Scope: got %q; want %q", gvk, got, tt.wantScope)
			}
		})
	}
}

// URI-5: /version and the health endpoints.
func TestVersionAndHealth(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dc, _ := newDiscovery(t, e)
	ctx := testContext(t)

	t.Run("version", func(t *testing.T) {
		v, err := dc.ServerVersion()
		if err != nil {
			t.Fatalf("ServerVersion: %v", err)
		}
		if v.GitVersion == "" {
			t.Errorf("ServerVersion().GitVersion: got %q; want non-empty", v.GitVersion)
		}
	})
	for _, path := range []string{"/healthz", "/livez", "/readyz"} {
		t.Run(path, func(t *testing.T) {
			body, err := dc.RESTClient().Get().AbsPath(path).DoRaw(ctx)
			if err != nil {
				t.Fatalf("GET %s: %v", path, err)
			}
			if string(body) != "ok" {
				t.Errorf("GET %s: got %q; want %q", path, body, "ok")
			}
		})
	}
	t.Run("unknown resource in served group version", func(t *testing.T) {
		gvr := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "gadgets"}
		_, err := e.dyn.Resource(gvr).Namespace("default").Get(ctx, "x", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("GET gadgets/x: got %v; want NotFound", err)
		}
	})
}

// TestDiscoveryInProtobuf: a client configured for protobuf, as
// controllers often configure client-go, reads the legacy discovery
// documents in protobuf (kube answers them so) and decodes from kapi what
// it decodes from kube-apiserver: whole documents for group versions both
// serve whole, the type and kapi's resources for the core group (kapi
// serves fewer core kinds).
func TestDiscoveryInProtobuf(t *testing.T) {
	kube := kubeAPIServer(t)
	e := newEnv(t)
	var clients []*discovery.DiscoveryClient
	var logs []*requestLog
	for _, cfg := range []*rest.Config{
		{Host: kube.URL, BearerToken: "admin-token", TLSClientConfig: rest.TLSClientConfig{CAData: kube.CA}, QPS: -1},
		e.config(),
	} {
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
		logs = append(logs, recordClientRequests(cfg))
		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, dc)
	}
	for _, gv := range []string{"v1", "apps/v1", "rbac.authorization.k8s.io/v1", "batch/v1"} {
		var lists [2]*metav1.APIResourceList
		for i, dc := range clients {
			l, err := dc.ServerResourcesForGroupVersion(gv)
			if err != nil {
				t.Fatalf("%s: %v", gv, err)
			}
			lists[i] = l
		}
		kubeList, kapiList := lists[0], lists[1]
		if gv == "v1" {
			served := map[string]metav1.APIResource{}
			for _, r := range kubeList.APIResources {
				served[r.Name] = r
			}
			for i, r := range kapiList.APIResources {
				if diff := cmp.Diff(served[r.Name], r); diff != "" {
					t.Errorf("v1 %s (-kube +kapi):\n%s", r.Name, diff)
				}
				kapiList.APIResources[i] = metav1.APIResource{}
			}
			kubeList.APIResources = make([]metav1.APIResource, len(kapiList.APIResources))
		}
		if diff := cmp.Diff(kubeList, kapiList); diff != "" {
			t.Errorf("%s (-kube +kapi):\n%s", gv, diff)
		}
	}
	for i, log := range logs {
		for _, r := range log.matching(func(r request) bool { return strings.HasPrefix(r.Path, "/api") }) {
			if r.Status != 200 || r.ContentType != "application/vnd.kubernetes.protobuf" {
				t.Errorf("%s: %v: want 200 in protobuf", []string{"kube", "kapi"}[i], r)
			}
		}
	}
}
