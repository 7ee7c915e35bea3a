package conformance

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/builtin"
)

// modelledSubresources are the subresources of the built-in kinds kapi
// serves (README lists the others).
var modelledSubresources = []string{"status", "scale", "binding", "eviction", "token", "approval"}

// Every built-in kind's discovery entry beside kube-apiserver's: kind,
// scope, singular, short names, categories and verbs; its subresources
// are kube's that kapi models, with kube's kinds and verbs.
func TestBuiltinDiscoveryAsKube(t *testing.T) {
	kube := kubeAPIServer(t)
	e := newEnv(t)
	clients := []*discovery.DiscoveryClient{}
	for _, cfg := range []*rest.Config{
		{Host: kube.URL, BearerToken: "admin-token", TLSClientConfig: rest.TLSClientConfig{CAData: kube.CA}, QPS: -1},
		e.config(),
	} {
		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, dc)
	}
	resources, err := builtin.Resources(builtin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lists := map[string][]*metav1.APIResourceList{}
	for _, res := range resources {
		gv := res.GroupVersion()
		if lists[gv] == nil {
			for _, dc := range clients {
				l, err := dc.ServerResourcesForGroupVersion(gv)
				if err != nil {
					t.Fatalf("%s: %v", gv, err)
				}
				lists[gv] = append(lists[gv], l)
			}
		}
		t.Run(gv+"/"+res.Plural, func(t *testing.T) {
			var entries [2]map[string]metav1.APIResource
			for i, l := range lists[gv] {
				entries[i] = map[string]metav1.APIResource{}
				for _, r := range l.APIResources {
					name, sub, _ := strings.Cut(r.Name, "/")
					if name != res.Plural || (sub != "" && !slices.Contains(modelledSubresources, sub)) {
						continue
					}
					r.StorageVersionHash = ""
					sort.Strings(r.Verbs)
					entries[i][r.Name] = r
				}
			}
			if d := cmp.Diff(entries[0], entries[1]); d != "" {
				t.Errorf("discovery differs (-kube +kapi):\n%s", d)
			}
		})
	}
}
