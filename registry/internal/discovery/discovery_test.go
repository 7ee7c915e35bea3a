package discovery

import (
	"bytes"
	"encoding/json"
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
