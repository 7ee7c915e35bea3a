package cel_test

import (
	"context"
	"fmt"

	"github.com/kapi-dev/kapi/cel"
	"github.com/kapi-dev/kapi/schema"
)

func ExampleCompile() {
	s, err := schema.Parse([]byte(`
type: object
properties:
  spec:
    type: object
    properties:
      replicas: {type: integer}
      minReplicas: {type: integer}
      color: {type: string, maxLength: 32}
    x-kubernetes-validations:
    - rule: "self.minReplicas <= self.replicas"
      message: "must not exceed replicas"
      fieldPath: ".minReplicas"
    - rule: "self.color == oldSelf.color"
      message: "color is immutable"
`))
	if err != nil {
		panic(err)
	}
	rules, err := cel.Compile(s)
	if err != nil {
		panic(err)
	}
	old := map[string]any{"spec": map[string]any{"replicas": 3, "minReplicas": 1, "color": "red"}}
	obj := map[string]any{"spec": map[string]any{"replicas": 1, "minReplicas": 2, "color": "blue"}}

	fmt.Println("create:")
	for _, e := range rules.Validate(context.Background(), obj, nil) {
		fmt.Println(e)
	}
	fmt.Println("update:")
	for _, e := range rules.Validate(context.Background(), obj, old) {
		fmt.Println(e)
	}

	s.Properties["spec"].Validations[0].Rule = "self.minReplicas <="
	_, err = cel.Compile(s)
	fmt.Println(err != nil)
	// Output:
	// create:
	// spec.minReplicas: Invalid value: must not exceed replicas
	// update:
	// spec.minReplicas: Invalid value: must not exceed replicas
	// spec: Invalid value: color is immutable
	// true
}
