// Package server builds the example API served by examples/apiserver: core
// v1 namespaces and configmaps, and widgets.example.com/v1 Widget with
// status and scale subresources. Tests start it in-process.
package server

import (
	"github.com/kapi-dev/kapi/codec/protobuf"
	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

// Options configure the example server.
type Options struct {
	// Storage holds the objects; nil is a fresh in-memory store.
	Storage storage.Interface
	// Registry tunes the registry; its Storage is set from Storage.
	Registry registry.Options
}

// ConfigMaps is the core v1 configmaps resource.
func ConfigMaps() *registry.Resource {
	return &registry.Resource{
		Version: "v1", Kind: "ConfigMap", Plural: "configmaps", Singular: "configmap",
		ShortNames: []string{"cm"}, Namespaced: true,
		Protobuf: protobuf.ConfigMap,
		Columns: []registry.Column{
			{Name: "Data", Type: "integer", Description: "Number of entries in data and binaryData", Value: func(obj registry.Object) any {
				data, _ := obj["data"].(map[string]any)
				binary, _ := obj["binaryData"].(map[string]any)
				return int64(len(data) + len(binary))
			}},
			{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
		},
	}
}

// Widgets is the widgets.example.com/v1 Widget resource.
func Widgets() *registry.Resource {
	return &registry.Resource{
		Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Singular: "widget",
		ShortNames: []string{"wd"}, Categories: []string{"all"}, Namespaced: true,
		Status:           true,
		Scale:            &registry.Scale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.readyReplicas"},
		SelectableFields: []string{"spec.color"},
		Schema:           &registry.Schema{OpenAPIV3: widgetSchema},
		Columns: []registry.Column{
			{Name: "Color", Type: "string", JSONPath: ".spec.color"},
			{Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas"},
			{Name: "Ready", Type: "integer", JSONPath: ".status.readyReplicas", Priority: 1},
			{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
		},
	}
}

var widgetSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"spec": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"color":    map[string]any{"type": "string"},
				"replicas": map[string]any{"type": "integer"},
				"ports": map[string]any{
					"type":                       "array",
					"x-kubernetes-list-type":     "map",
					"x-kubernetes-list-map-keys": []any{"port", "protocol"},
					"items": map[string]any{
						"type": "object",
						"properties": map[string]any{
							"name":     map[string]any{"type": "string"},
							"port":     map[string]any{"type": "integer"},
							"protocol": map[string]any{"type": "string"},
						},
						"required": []any{"port", "protocol"},
					},
				},
			},
		},
		"status": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"readyReplicas": map[string]any{"type": "integer"},
				"conditions":    map[string]any{"type": "array", "items": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			},
		},
	},
}

// New returns the example registry.
func New(opts Options) (*registry.Registry, error) {
	ro := opts.Registry
	ro.Storage = opts.Storage
	if ro.Storage == nil {
		ro.Storage = memory.New(memory.Options{})
	}
	r, err := registry.New(ro)
	if err != nil {
		return nil, err
	}
	for _, res := range []*registry.Resource{ConfigMaps(), Widgets()} {
		if err := r.Register(res); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Kubeconfig returns a kubeconfig for a server at url (such as
// "http://127.0.0.1:8080"), with namespace default, for kubectl and
// client-go.
func Kubeconfig(url string) []byte {
	return []byte(`apiVersion: v1
kind: Config
clusters:
- name: kapi
  cluster:
    server: ` + url + `
contexts:
- name: kapi
  context:
    cluster: kapi
    user: kapi
    namespace: default
users:
- name: kapi
  user: {}
current-context: kapi
`)
}
