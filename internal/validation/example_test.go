package validation_test

import (
	"fmt"

	"github.com/kapi-dev/kapi/internal/validation"
)

func Example() {
	meta := map[string]any{
		"name":      "My_Widget",
		"namespace": "default",
		"labels":    map[string]any{"app": "web"},
	}
	for _, err := range validation.ValidateObjectMeta(meta, validation.MetaOptions{Namespaced: true}) {
		fmt.Println(err.Type)
		fmt.Println(err)
	}
	fmt.Println(validation.IsValidLabelValue("web-1") == nil)
	// Output:
	// FieldValueInvalid
	// metadata.name: Invalid value: "My_Widget": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')
	// true
}

func ExampleGenerateName() {
	name := validation.GenerateName("web-")
	fmt.Println(len(name), name[:4])
	// Output: 9 web-
}
