package patch_test

import (
	"errors"
	"fmt"

	"github.com/kapi-dev/kapi/patch"
)

func Example() {
	obj := []byte(`{"metadata":{"name":"w"},"spec":{"color":"red","replicas":1}}`)

	out, _ := patch.MergePatch(obj, []byte(`{"spec":{"color":null,"replicas":3}}`), patch.Options{})
	fmt.Println(string(out))

	out, _ = patch.JSONPatch(obj, []byte(`[{"op":"test","path":"/spec/replicas","value":1},{"op":"replace","path":"/spec/replicas","value":2}]`), patch.Options{})
	fmt.Println(string(out))

	_, err := patch.JSONPatch(obj, []byte(`[{"op":"test","path":"/spec/color","value":"blue"}]`), patch.Options{})
	fmt.Println(errors.Is(err, patch.ErrApply), err)
	// Output:
	// {"metadata":{"name":"w"},"spec":{"replicas":3}}
	// {"metadata":{"name":"w"},"spec":{"color":"red","replicas":2}}
	// true testing value /spec/color failed: test failed
}
