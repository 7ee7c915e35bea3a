package schema_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kapi-dev/kapi/schema"
)

// A custom resource goes through what kube-apiserver does to it: unknown
// fields are pruned (and reported), defaults are applied, and what is
// left is validated.
func ExampleSchema_Validate() {
	s, err := schema.Parse([]byte(`
type: object
properties:
  spec:
    type: object
    required: [replicas]
    properties:
      replicas: {type: integer, minimum: 0}
      mode: {type: string, enum: [fast, safe], default: safe}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	d := json.NewDecoder(strings.NewReader(`{"apiVersion":"example.com/v1","kind":"Widget","spec":{"replicas":-1,"color":"red"}}`))
	d.UseNumber()
	var obj map[string]any
	if err := d.Decode(&obj); err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range s.Prune(obj) {
		fmt.Printf("unknown field %q\n", p)
	}
	s.ApplyDefaults(obj)
	fmt.Println("mode:", obj["spec"].(map[string]any)["mode"])
	for _, e := range s.Validate(obj) {
		fmt.Println(e)
	}
	// Output:
	// unknown field "spec.color"
	// mode: safe
	// spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0
}

// An object stored before its schema was tightened can still be updated:
// errors in values the update leaves unchanged are not reported
// (validation ratcheting), errors in changed values are.
func ExampleSchema_ValidateUpdate() {
	s, err := schema.Parse([]byte(`
type: object
properties:
  spec:
    type: object
    properties:
      name: {type: string, maxLength: 5}
      note: {type: string}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	old := map[string]any{"spec": map[string]any{"name": "too-long", "note": "a"}}
	fmt.Println(s.ValidateUpdate(map[string]any{"spec": map[string]any{"name": "too-long", "note": "b"}}, old))
	fmt.Println(s.ValidateUpdate(map[string]any{"spec": map[string]any{"name": "longer!", "note": "a"}}, old))
	// Output:
	// []
	// [spec.name: Too long: may not be more than 5 bytes]
}
