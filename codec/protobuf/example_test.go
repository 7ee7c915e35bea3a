package protobuf_test

import (
	"encoding/json"
	"fmt"

	"github.com/kapi-dev/kapi/codec/protobuf"
)

// A ConfigMap in JSON form goes to protobuf and back; the envelope carries
// its type, as "application/vnd.kubernetes.protobuf" bodies do.
func Example() {
	cm := map[string]any{
		"metadata":   map[string]any{"name": "settings", "creationTimestamp": "2026-11-23T07:38:04Z"},
		"data":       map[string]any{"color": "blue"},
		"binaryData": map[string]any{"logo": "iVBORw=="},
		"immutable":  false, // a pointer in Go: its zero is kept
	}
	raw, err := protobuf.Marshal(protobuf.ConfigMap, cm)
	if err != nil {
		panic(err)
	}
	body := protobuf.AppendEnvelope(nil, protobuf.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, raw)

	tm, raw, err := protobuf.DecodeEnvelope(body)
	if err != nil {
		panic(err)
	}
	back, err := protobuf.Unmarshal(protobuf.ConfigMap, raw)
	if err != nil {
		panic(err)
	}
	out, _ := json.Marshal(back)
	fmt.Println(tm.APIVersion, tm.Kind)
	fmt.Println(string(out))

	_, err = protobuf.Marshal(protobuf.ConfigMap, map[string]any{"data": map[string]any{"n": json.Number("1")}})
	fmt.Println(err)
	// Output:
	// v1 ConfigMap
	// {"binaryData":{"logo":"iVBORw=="},"data":{"color":"blue"},"immutable":false,"metadata":{"creationTimestamp":"2026-11-23T07:38:04Z","name":"settings"}}
	// data.n: expected string, got number
}

// A watch stream is a sequence of frames; each holds the event type and the
// object in its envelope.
func ExampleAppendWatchFrame() {
	raw, _ := protobuf.Marshal(protobuf.Namespace, map[string]any{"metadata": map[string]any{"name": "team-a"}})
	stream := protobuf.AppendWatchFrame(nil, "ADDED", protobuf.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, raw)
	stream = protobuf.AppendWatchFrame(stream, "DELETED", protobuf.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, raw)

	for len(stream) > 0 {
		ev, rest, err := protobuf.DecodeWatchFrame(stream)
		if err != nil {
			panic(err)
		}
		ns, _ := protobuf.Unmarshal(protobuf.Namespace, ev.Object)
		fmt.Println(ev.Type, ev.TypeMeta.Kind, ns["metadata"])
		stream = rest
	}
	// Output:
	// ADDED Namespace map[name:team-a]
	// DELETED Namespace map[name:team-a]
}

// A discovery document (here /apis/apps/v1's APIResourceList) in the
// envelope kube-apiserver answers with for
// "Accept: application/vnd.kubernetes.protobuf".
func Example_discovery() {
	list := map[string]any{
		"groupVersion": "apps/v1",
		"resources": []any{map[string]any{
			"name": "deployments", "singularName": "deployment", "namespaced": true, "kind": "Deployment",
			"verbs": []any{"get", "list", "watch"}, "shortNames": []any{"deploy"}, "categories": []any{"all"},
		}},
	}
	raw, err := protobuf.Marshal(protobuf.APIResourceList, list)
	if err != nil {
		panic(err)
	}
	body := protobuf.AppendEnvelope(nil, protobuf.TypeMeta{APIVersion: "v1", Kind: "APIResourceList"}, raw)

	_, raw, _ = protobuf.DecodeEnvelope(body)
	back, _ := protobuf.Unmarshal(protobuf.APIResourceList, raw)
	out, _ := json.Marshal(back)
	fmt.Println(string(out))
	// Output:
	// {"groupVersion":"apps/v1","resources":[{"categories":["all"],"kind":"Deployment","name":"deployments","namespaced":true,"shortNames":["deploy"],"singularName":"deployment","verbs":["get","list","watch"]}]}
}
