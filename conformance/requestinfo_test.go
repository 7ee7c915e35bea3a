package conformance

import (
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/util/sets"
	kinfo "k8s.io/apiserver/pkg/endpoints/request"

	kapirequest "github.com/kapi-dev/kapi/registry/request"
)

// TestRequestInfoAsKube compares request.Parse, the attributes every
// kapi route authorizes with, to k8s.io/apiserver's RequestInfoFactory
// (what kube-apiserver's authorizers are asked with) on a sample of every
// kind of route: discovery and other non-resource paths, collections,
// objects, subresources, the namespace's own subresources, the legacy
// watch prefix, watch and field-selector queries, and malformed paths.
func TestRequestInfoAsKube(t *testing.T) {
	kube := &kinfo.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}
	samples := []struct{ method, url string }{
		{"GET", "/"}, {"GET", "/healthz"}, {"GET", "/version"}, {"GET", "/api"}, {"GET", "/apis"},
		{"GET", "/api/v1"}, {"GET", "/apis/example.com"}, {"GET", "/apis/example.com/v1"}, {"GET", "/apis/example.com/v1/"},
		{"GET", "/openapi/v2"}, {"GET", "/openapi/v3/apis/example.com/v1"}, {"POST", "/metrics"},
		{"GET", "/api/v1/namespaces"}, {"POST", "/api/v1/namespaces"}, {"GET", "/api/v1/namespaces/a"},
		{"DELETE", "/api/v1/namespaces/a"}, {"PUT", "/api/v1/namespaces/a/status"}, {"PUT", "/api/v1/namespaces/a/finalize"},
		{"GET", "/api/v1/namespaces/a/configmaps"}, {"GET", "/api/v1/namespaces/a/configmaps?watch=true"},
		{"GET", "/api/v1/namespaces/a/configmaps?watch=1&resourceVersion=10"}, {"GET", "/api/v1/namespaces/a/configmaps?watch=false"},
		{"GET", "/api/v1/namespaces/a/configmaps?watch="}, {"GET", "/api/v1/namespaces/a/configmaps?watch=yes"},
		{"GET", "/api/v1/namespaces/a/configmaps?fieldSelector=metadata.name%3Dx"},
		{"GET", "/api/v1/namespaces/a/configmaps?fieldSelector=metadata.name%3D%3Dx,metadata.namespace%3Da"},
		{"GET", "/api/v1/namespaces/a/configmaps?fieldSelector=metadata.name!%3Dx"},
		{"GET", "/api/v1/namespaces/a/configmaps?watch=true&fieldSelector=metadata.name%3Dx"},
		{"GET", "/api/v1/configmaps"}, {"POST", "/api/v1/namespaces/a/configmaps"}, {"DELETE", "/api/v1/namespaces/a/configmaps"},
		{"GET", "/api/v1/namespaces/a/configmaps/x"}, {"PUT", "/api/v1/namespaces/a/configmaps/x"},
		{"PATCH", "/api/v1/namespaces/a/configmaps/x"}, {"DELETE", "/api/v1/namespaces/a/configmaps/x"},
		{"HEAD", "/api/v1/namespaces/a/configmaps/x"}, {"OPTIONS", "/api/v1/namespaces/a/configmaps/x"},
		{"GET", "/api/v1/watch/namespaces/a/configmaps"}, {"GET", "/api/v1/watch/namespaces/a/configmaps/x"},
		{"GET", "/api/v1/watch/configmaps?fieldSelector=metadata.name%3Dx"},
		{"GET", "/apis/example.com/v1/namespaces/a/widgets/w/status"}, {"PATCH", "/apis/example.com/v1/namespaces/a/widgets/w/scale"},
		{"POST", "/apis/example.com/v1/namespaces/a/widgets/w/custom/extra"}, {"GET", "/apis/example.com/v1/clusterwidgets/w"},
		{"POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"},
		{"POST", "/apis/authorization.k8s.io/v1/namespaces/a/localsubjectaccessreviews"},
		{"GET", "/api/v1/namespaces/a/pods/p/proxy/some/path"}, {"GET", "/api/v1/proxy/namespaces/a/pods/p/x"},
		{"GET", "/api/v1/namespaces/default/namespaces"}, {"GET", "/api/v1/namespaces/"}, {"GET", "//api//v1//namespaces"},
	}
	for _, s := range samples {
		t.Run(s.method+" "+s.url, func(t *testing.T) {
			req := httptest.NewRequest(s.method, s.url, nil)
			want, wantErr := kube.NewRequestInfo(req)
			got, err := kapirequest.Parse(s.method, req.URL)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("error: got %v; want %v", err, wantErr)
			}
			if err != nil {
				return
			}
			w := kapirequest.Info{IsResourceRequest: want.IsResourceRequest, Path: want.Path, Verb: want.Verb, APIPrefix: want.APIPrefix,
				APIGroup: want.APIGroup, APIVersion: want.APIVersion, Namespace: want.Namespace, Resource: want.Resource,
				Subresource: want.Subresource, Name: want.Name, Parts: want.Parts}
			if d := cmp.Diff(w, *got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("request.Parse differs from kube's RequestInfoFactory (-kube +kapi):\n%s", d)
			}
		})
	}
}
