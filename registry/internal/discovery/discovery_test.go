package discovery

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

var widgets = Group{Name: "example.com", Versions: []Version{
	{Version: "v1", Resources: []Resource{{
		Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Singular: "widget",
		ShortNames: []string{"wd"}, Namespaced: true, Subresources: []string{"status", "scale"},
	}}},
	{Version: "v2"},
}}

func TestNewAPIGroup(t *testing.T) {
	b, _ := json.Marshal(NewAPIGroup(widgets))
	want := `{"name":"example.com","versions":[{"groupVersion":"example.com/v1","version":"v1"},{"groupVersion":"example.com/v2","version":"v2"}],"preferredVersion":{"groupVersion":"example.com/v1","version":"v1"}}`
	if string(b) != want {
		t.Errorf("got %s; want %s", b, want)
	}
}

func TestResourceList(t *testing.T) {
	b, _ := json.Marshal(ResourceList("example.com", widgets.Versions[0]))
	want := `{"apiVersion":"v1","groupVersion":"example.com/v1","kind":"APIResourceList","resources":[` +
		`{"name":"widgets","singularName":"widget","namespaced":true,"kind":"Widget","verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"shortNames":["wd"]},` +
		`{"name":"widgets/status","singularName":"","namespaced":true,"kind":"Widget","verbs":["get","patch","update"]},` +
		`{"name":"widgets/scale","singularName":"","namespaced":true,"group":"autoscaling","version":"v1","kind":"Scale","verbs":["get","patch","update"]}]}`
	if string(b) != want {
		t.Errorf("got %s; want %s", b, want)
	}
}

func TestAggregated(t *testing.T) {
	l := Aggregated([]Group{widgets})
	if got, want := len(l.Items), 1; got != want {
		t.Fatalf("items: got %d; want %d", got, want)
	}
	v1 := l.Items[0].Versions[0]
	r := v1.Resources[0]
	if r.Scope != "Namespaced" || r.ResponseKind.Kind != "Widget" || len(r.Subresources) != 2 {
		t.Errorf("resource: got %+v; want a namespaced Widget with 2 subresources", r)
	}
	if got := r.Subresources[1].ResponseKind; got != (groupVersionKind{"autoscaling", "v1", "Scale"}) {
		t.Errorf("scale's kind: got %+v; want autoscaling/v1 Scale", got)
	}
	if got := l.Items[0].Versions[1].Resources; got == nil || len(got) != 0 {
		t.Errorf("empty version's resources: got %#v; want []", got)
	}
}

// A subresource with a kind of its own (pods/eviction) is published with
// its kind and verbs in both documents.
func TestSubresourceKinds(t *testing.T) {
	pods := Version{Version: "v1", Resources: []Resource{{
		Version: "v1", Kind: "Pod", Plural: "pods", Singular: "pod", Namespaced: true,
		Subresources:     []string{"status", "eviction"},
		SubresourceKinds: map[string]Subresource{"eviction": {Group: "policy", Version: "v1", Kind: "Eviction", Verbs: []string{"create"}}},
	}}}
	b, _ := json.Marshal(ResourceList("", pods))
	want := `{"groupVersion":"v1","kind":"APIResourceList","resources":[` + // the core group's names no apiVersion, as kube's
		`{"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod","verbs":["create","delete","deletecollection","get","list","patch","update","watch"]},` +
		`{"name":"pods/status","singularName":"","namespaced":true,"kind":"Pod","verbs":["get","patch","update"]},` +
		`{"name":"pods/eviction","singularName":"","namespaced":true,"group":"policy","version":"v1","kind":"Eviction","verbs":["create"]}]}`
	if string(b) != want {
		t.Errorf("resource list: got %s; want %s", b, want)
	}
	subs := Aggregated([]Group{{Versions: []Version{pods}}}).Items[0].Versions[0].Resources[0].Subresources
	for _, tt := range []struct {
		i     int
		kind  groupVersionKind
		verbs string
	}{
		{0, groupVersionKind{"", "", "Pod"}, "[get patch update]"}, // a built-in kind's own: no group or version, as kube's
		{1, groupVersionKind{"policy", "v1", "Eviction"}, "[create]"},
	} {
		if got := subs[tt.i]; got.ResponseKind != tt.kind || fmt.Sprint(got.Verbs) != tt.verbs {
			t.Errorf("aggregated %s: got %+v %v; want %+v %s", got.Subresource, got.ResponseKind, got.Verbs, tt.kind, tt.verbs)
		}
	}
}

// A built-in kind's aggregated entries leave its own group and version
// out of responseKind (kube converts its APIResourceList, where they are
// empty); a custom resource's name them; another group's kind (Scale) is
// named in both.
func TestResponseKind(t *testing.T) {
	for _, custom := range []bool{false, true} {
		res := Resource{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Subresources: []string{"scale", "status"}, Custom: custom}
		got := Aggregated([]Group{{Name: "example.com", Versions: []Version{{Version: "v1", Resources: []Resource{res}}}}}).Items[0].Versions[0].Resources[0]
		own := groupVersionKind{Kind: "Widget"}
		if custom {
			own = groupVersionKind{"example.com", "v1", "Widget"}
		}
		want := []groupVersionKind{own, {"autoscaling", "v1", "Scale"}, own}
		if kinds := []groupVersionKind{got.ResponseKind, got.Subresources[0].ResponseKind, got.Subresources[1].ResponseKind}; !slices.Equal(kinds, want) {
			t.Errorf("custom=%v: got %+v; want %+v", custom, kinds, want)
		}
	}
}

func TestCompareGroups(t *testing.T) {
	// kube-apiserver 1.37's /apis order for these groups.
	want := []string{"apps", "events.k8s.io", "authentication.k8s.io", "autoscaling", "batch", "rbac.authorization.k8s.io",
		"admissionregistration.k8s.io", "apiextensions.k8s.io", "coordination.k8s.io", "discovery.k8s.io", "a.example.com", "example.com", "z.io"}
	got := slices.Clone(want)
	slices.Reverse(got)
	slices.SortFunc(got, CompareGroups)
	if !slices.Equal(got, want) {
		t.Errorf("got %v; want %v", got, want)
	}
}

func TestCompareVersions(t *testing.T) {
	// kube's own example (k8s.io/apimachinery/pkg/version), in order.
	want := []string{"v10", "v2", "v1", "v11beta2", "v10beta3", "v3beta1", "v12alpha1", "v11alpha2", "foo1", "foo10", "v01", "v1beta0"}
	got := slices.Clone(want)
	slices.Reverse(got)
	slices.SortFunc(got, CompareVersions)
	if !slices.Equal(got, want) {
		t.Errorf("got %v; want %v", got, want)
	}
}

func TestAssembleAggregated(t *testing.T) {
	groups := []Group{
		{Name: "a.example.com", Versions: []Version{
			{Version: "v2", Resources: []Resource{{Group: "a.example.com", Version: "v2", Kind: "A", Plural: "as", Singular: "a", Subresources: []string{"status", "scale"}}}},
			{Version: "v1", Resources: []Resource{{Group: "a.example.com", Version: "v1", Kind: "A", Plural: "as", Singular: "a", ShortNames: []string{"aa"}, Categories: []string{"all"}, Namespaced: true}}},
		}},
		{Name: "b.example.com", Versions: []Version{{Version: "v1"}}},
	}
	for _, tc := range []struct {
		name   string
		groups []Group
	}{{"none", nil}, {"two groups", groups}} {
		t.Run(tc.name, func(t *testing.T) {
			var ag []AggregatedGroup
			for _, g := range tc.groups {
				a := AggregatedGroup{Name: g.Name}
				for _, v := range g.Versions {
					a.Versions = append(a.Versions, AggregatedVersion(v))
				}
				ag = append(ag, a)
			}
			want, err := json.Marshal(Aggregated(tc.groups))
			if err != nil {
				t.Fatal(err)
			}
			if got := AssembleAggregated(ag); !bytes.Equal(got, want) {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

// The hashes kube-apiserver v1.37 lists for these kinds.
func TestStorageVersionHash(t *testing.T) {
	tests := []struct {
		group, version, kind string
		want                 string
	}{
		{"rbac.authorization.k8s.io", "v1", "Role", "7FuwZcIIItM="},
		{"rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "48tpQ8gZHFc="},
		{"example.com", "v1", "Widget", "gIwvi5rymmg="},
		{"validation.example.com", "v1", "Gadget", "wV1ZfeyGUa0="},
		{"", "", "Review", ""},
	}
	for _, tt := range tests {
		if got := StorageVersionHash(tt.group, tt.version, tt.kind); got != tt.want {
			t.Errorf("%s/%s/%s: got %q; want %q", tt.group, tt.version, tt.kind, got, tt.want)
		}
	}
}
