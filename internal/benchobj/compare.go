package benchobj

import (
	"encoding/json"
	"fmt"
	"strings"
)

// CompareCRD is the CustomResourceDefinition of bench/compare's widgets,
// which both of its HTTP peers serve: the example server's
// widgets.example.com (examples/apiserver/server/crds) with the spec
// fields the scenarios write (counter, sentAt) and the filler
// (description) added, which the example's schema would prune.
const CompareCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            properties:
              color: {type: string}
              replicas: {type: integer}
              counter: {type: integer}
              sentAt: {type: integer}
              description: {type: string}
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [port, protocol]
                items:
                  type: object
                  required: [port, protocol]
                  properties:
                    name: {type: string}
                    port: {type: integer}
                    protocol: {type: string}
          status:
            type: object
            properties:
              readyReplicas: {type: integer}
`

// CompareWidget is bench/compare's ~2 KiB widget i (compare.Widget) in
// namespace ns, in the form kapi holds it: numbers as json.Number.
func CompareWidget(i int, ns string) map[string]any {
	name := fmt.Sprintf("w-%06d", i)
	return map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata": map[string]any{
			"name":              name,
			"namespace":         ns,
			"uid":               fmt.Sprintf("00000000-0000-4000-8000-%012d", i),
			"creationTimestamp": "2026-01-01T00:00:00Z",
			"labels":            map[string]any{"app": "bench", "shard": fmt.Sprintf("s%02d", i%100)},
			"annotations":       map[string]any{"example.com/owner": "team-" + name},
		},
		"spec": map[string]any{
			"color":       "blue",
			"replicas":    json.Number("3"),
			"counter":     json.Number("0"),
			"sentAt":      json.Number("0"),
			"description": strings.Repeat("0123456789abcdef", (2048-560)/16),
			"ports": []any{
				map[string]any{"name": "http", "port": json.Number("80"), "protocol": "TCP"},
				map[string]any{"name": "https", "port": json.Number("443"), "protocol": "TCP"},
			},
		},
		"status": map[string]any{"readyReplicas": json.Number("3")},
	}
}
