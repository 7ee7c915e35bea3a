package request

import (
	"net/url"
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		method, url string
		want        Info
	}{
		{"GET", "/api", Info{Path: "/api", Verb: "get"}},
		{"GET", "/api/v1", Info{Path: "/api/v1", Verb: "get"}},
		{"GET", "/apis/g/v1", Info{Path: "/apis/g/v1", Verb: "get", APIPrefix: "apis"}}, // as kube: the prefix is read before the request is found to be non-resource
		{"GET", "/version", Info{Path: "/version", Verb: "get"}},
		{"POST", "/openapi/v3/apis/g/v1", Info{Path: "/openapi/v3/apis/g/v1", Verb: "post"}},
		{"GET", "/api/v1/namespaces", Info{IsResourceRequest: true, Path: "/api/v1/namespaces", Verb: "list", APIPrefix: "api", APIVersion: "v1", Resource: "namespaces", Parts: []string{"namespaces"}}},
		{"GET", "/api/v1/namespaces/a", Info{IsResourceRequest: true, Path: "/api/v1/namespaces/a", Verb: "get", APIPrefix: "api", APIVersion: "v1", Namespace: "a", Resource: "namespaces", Name: "a", Parts: []string{"namespaces", "a"}}},
		{"PUT", "/api/v1/namespaces/a/finalize", Info{IsResourceRequest: true, Path: "/api/v1/namespaces/a/finalize", Verb: "update", APIPrefix: "api", APIVersion: "v1", Namespace: "a", Resource: "namespaces", Name: "a", Subresource: "finalize", Parts: []string{"namespaces", "a", "finalize"}}},
		{"GET", "/api/v1/namespaces/a/configmaps?watch=1", Info{IsResourceRequest: true, Path: "/api/v1/namespaces/a/configmaps", Verb: "watch", APIPrefix: "api", APIVersion: "v1", Namespace: "a", Resource: "configmaps", Parts: []string{"configmaps"}}},
		{"GET", "/api/v1/watch/namespaces/a/configmaps/x", Info{IsResourceRequest: true, Path: "/api/v1/watch/namespaces/a/configmaps/x", Verb: "watch", APIPrefix: "api", APIVersion: "v1", Namespace: "a", Resource: "configmaps", Name: "x", Parts: []string{"configmaps", "x"}}},
		{"GET", "/api/v1/namespaces/a/configmaps?fieldSelector=metadata.name%3Dx", Info{IsResourceRequest: true, Path: "/api/v1/namespaces/a/configmaps", Verb: "list", APIPrefix: "api", APIVersion: "v1", Namespace: "a", Resource: "configmaps", Name: "x", Parts: []string{"configmaps"}}},
		{"DELETE", "/apis/g/v1/widgets", Info{IsResourceRequest: true, Path: "/apis/g/v1/widgets", Verb: "deletecollection", APIPrefix: "apis", APIGroup: "g", APIVersion: "v1", Resource: "widgets", Parts: []string{"widgets"}}},
		{"PATCH", "/apis/g/v1/namespaces/a/widgets/w/scale", Info{IsResourceRequest: true, Path: "/apis/g/v1/namespaces/a/widgets/w/scale", Verb: "patch", APIPrefix: "apis", APIGroup: "g", APIVersion: "v1", Namespace: "a", Resource: "widgets", Name: "w", Subresource: "scale", Parts: []string{"widgets", "w", "scale"}}},
		{"OPTIONS", "/apis/g/v1/widgets", Info{IsResourceRequest: true, Path: "/apis/g/v1/widgets", APIPrefix: "apis", APIGroup: "g", APIVersion: "v1", Resource: "widgets", Parts: []string{"widgets"}}},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.url, func(t *testing.T) {
			u, err := url.Parse(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Parse(tt.method, u)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("got %+v; want %+v", *got, tt.want)
			}
		})
	}
}

func TestParseNoResource(t *testing.T) {
	u, _ := url.Parse("/api/v1/watch")
	if _, err := Parse("GET", u); err != ErrNoResource {
		t.Errorf("got %v; want ErrNoResource", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"/api/v1/namespaces/a/pods/p/status", "/apis/g/v/watch/x", "//api//v1", "/api/v1/namespaces/", "/apis/a/b/c?fieldSelector=metadata.name=%2F"} {
		f.Add("GET", s)
	}
	f.Fuzz(func(t *testing.T, method, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		info, err := Parse(method, u)
		if err != nil {
			return
		}
		if info.IsResourceRequest && info.Resource == "" && info.APIVersion == "" {
			t.Errorf("resource request without version: %+v", info)
		}
	})
}
