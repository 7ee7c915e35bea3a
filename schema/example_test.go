package schema_test

import (
	"encoding/json"
	"fmt"

	"github.com/kapi-dev/kapi/schema"
)

func ExampleParse() {
	s, err := schema.Parse([]byte(`
type: object
properties:
  ports:
    type: array
    x-kubernetes-list-type: map
    x-kubernetes-list-map-keys: [port, protocol]
    items:
      type: object
      required: [port]
      properties:
        port: {type: integer}
        protocol: {type: string, default: TCP}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	ports := s.Properties["ports"]
	fmt.Println(ports.ListType, ports.ListMapKeys)

	_, err = schema.Parse([]byte(`{"properties": {"spec": {"properties": {"ports": {"items": {"type": "foo"}}}}}}`))
	fmt.Println(err)
	// Output:
	// map [port protocol]
	// schema: properties.spec.properties.ports.items: unknown type "foo"
}

func ExampleFor() {
	type Port struct {
		Port     int32  `json:"port"`
		Protocol string `json:"protocol,omitempty" default:"TCP"`
	}
	type Spec struct {
		Ports []Port `json:"ports,omitempty" listType:"map" listMapKeys:"port,protocol" patchStrategy:"merge" patchMergeKey:"port"`
	}
	s, err := schema.Of[Spec]()
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := json.Marshal(s.JSON())
	fmt.Println(string(b))
	// Output:
	// {"properties":{"ports":{"items":{"properties":{"port":{"format":"int32","type":"integer"},"protocol":{"default":"TCP","type":"string"}},"required":["port"],"type":"object"},"type":"array","x-kubernetes-list-map-keys":["port","protocol"],"x-kubernetes-list-type":"map","x-kubernetes-patch-merge-key":"port","x-kubernetes-patch-strategy":"merge"}},"type":"object"}
}

func ExampleLoadCRDs() {
	crds, err := schema.LoadCRDs("testdata/crds")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range crds {
		v := c.Versions[0]
		fmt.Println(c.Name, c.Names.Kind, v.Name, v.Status, v.Scale.SpecReplicasPath, len(v.Columns))
	}
	// Output:
	// cronjobs.batch.tutorial.kubebuilder.io CronJob v1 true .spec.replicas 5
}

func ExampleObjectMeta() {
	o := schema.ObjectMeta().Properties["ownerReferences"]
	fmt.Println(o.ListType, o.ListMapKeys, o.PatchStrategy, o.PatchMergeKey)
	// Output: map [uid] merge uid
}
