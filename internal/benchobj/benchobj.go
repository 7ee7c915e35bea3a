package benchobj

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Object returns a deterministic widget-like object of about size bytes of
// JSON (the first that reaches size), in the form kapi holds: numbers as
// json.Number. It has what real objects have: metadata with labels,
// annotations and managedFields, a spec with nested maps and lists of
// maps, integers, a float, booleans, a null, and strings with escapes,
// non-ASCII text and HTML-special characters.
func Object(size int) map[string]any {
	for n := 1; ; n++ {
		o := widget(n)
		if len(Encode(o)) >= size {
			return o
		}
	}
}

// Encode encodes v with encoding/json (kapi's encoder).
func Encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func num(i int) json.Number { return json.Number(strconv.Itoa(i)) }

// widget builds the object with (n+5)/6 containers and n data entries.
func widget(n int) map[string]any {
	containers := make([]any, (n+5)/6)
	fields := map[string]any{}
	data := map[string]any{}
	for i := range n {
		data[fmt.Sprintf("config-%03d.yaml", i)] = fmt.Sprintf("server:\n  port: %d\n  name: \"worker-%03d\"\n  motd: Grüße, ça va?\n", 8080+i, i)
		if i%6 != 0 {
			continue
		}
		name := fmt.Sprintf("worker-%03d", i)
		containers[i/6] = map[string]any{
			"name":  name,
			"image": fmt.Sprintf("registry.example.com/team/worker:v1.%d.%d", i%7, i),
			"args":  []any{"--listen=:8080", "--log-level=info", fmt.Sprintf("--shard=%d", i)},
			"ports": []any{map[string]any{"name": "http", "containerPort": num(8080 + i), "protocol": "TCP"}},
			"env": []any{
				map[string]any{"name": "MODE", "value": "production"},
				map[string]any{"name": "QUERY", "value": "a=1&b=<2>"},
			},
			"resources": map[string]any{
				"limits":   map[string]any{"cpu": "500m", "memory": "256Mi"},
				"requests": map[string]any{"cpu": "100m", "memory": "128Mi"},
			},
			"weight":     json.Number("0.75"),
			"privileged": i%2 == 0,
		}
		fields[`k:{"name":"`+name+`"}`] = map[string]any{".": map[string]any{}, "f:image": map[string]any{}, "f:args": map[string]any{}}
	}
	return map[string]any{
		"apiVersion": "example.com/v1",
		"kind":       "Widget",
		"metadata": map[string]any{
			"name":              "widget-sample",
			"namespace":         "default",
			"uid":               "6f1c2e7a-0d6b-4c8e-9a51-3b2f4d5e6a7b",
			"generation":        num(3),
			"creationTimestamp": "2026-01-01T00:00:00Z",
			"labels": map[string]any{
				"app.kubernetes.io/name":       "widget",
				"app.kubernetes.io/instance":   "sample",
				"app.kubernetes.io/managed-by": "kapi",
				"tier":                         "backend",
			},
			"annotations": map[string]any{
				"example.com/description": "A \"sample\" widget\nwith two lines",
				"example.com/dashboard":   "https://example.com/d?ns=default&name=widget-sample",
			},
			"finalizers": []any{"example.com/cleanup"},
			"managedFields": []any{map[string]any{
				"manager":    "kubectl-client-side-apply",
				"operation":  "Update",
				"apiVersion": "example.com/v1",
				"time":       "2026-01-01T00:00:00Z",
				"fieldsType": "FieldsV1",
				"fieldsV1": map[string]any{"f:spec": map[string]any{
					"f:replicas":   map[string]any{},
					"f:containers": fields,
				}},
			}},
		},
		"spec": map[string]any{
			"replicas":   num(3),
			"paused":     false,
			"ratio":      json.Number("0.5"),
			"deadline":   nil,
			"selector":   map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "widget"}},
			"containers": containers,
			"data":       data,
		},
		"status": map[string]any{
			"observedGeneration": num(3),
			"readyReplicas":      num(3),
			"conditions": []any{map[string]any{
				"type":               "Ready",
				"status":             "True",
				"lastTransitionTime": "2026-01-01T00:00:05Z",
				"reason":             "AllReplicasReady",
				"message":            "3/3 replicas are ready",
			}},
		},
	}
}

// JSON returns Object(size) encoded: about size bytes (2,079 for 2048,
// 102,661 for 100<<10).
func JSON(size int) []byte { return Encode(Object(size)) }
