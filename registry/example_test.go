package registry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/registry/admission"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/storage/memory"
)

func Example() {
	reg, _ := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
	reg.Register(&registry.Resource{
		Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true,
	})
	mux := http.NewServeMux()
	mux.Handle("/kapi/", http.StripPrefix("/kapi", reg)) // any prefix of the user's own mux
	srv := httptest.NewServer(mux)
	defer srv.Close()

	body := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"color":"red"}}`
	resp, _ := http.Post(srv.URL+"/kapi/apis/example.com/v1/namespaces/default/widgets", "application/json", strings.NewReader(body))
	resp.Body.Close()
	fmt.Println("create:", resp.StatusCode)

	resp, _ = http.Get(srv.URL + "/kapi/apis/example.com/v1/namespaces/default/widgets/missing")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println("get missing:", resp.StatusCode, strings.Contains(string(b), `"reason":"NotFound"`))
	// Output:
	// create: 201
	// get missing: 404 true
}

// Admission hooks see every write: here one labels new widgets and one
// refuses widgets without a color.
func ExampleOptions_admission() {
	label := &admission.Hook{Mutate: func(_ context.Context, a *admission.Attributes) error {
		if a.Operation == admission.Create {
			a.Object["metadata"].(map[string]any)["labels"] = map[string]any{"admitted": "yes"}
		}
		return nil
	}}
	color := &admission.Hook{
		Rules: []admission.Rule{{Resources: []string{"widgets"}}},
		Check: func(_ context.Context, a *admission.Attributes) error {
			if spec, _ := a.Object["spec"].(map[string]any); spec["color"] == nil {
				return errors.New("a widget needs a color")
			}
			return nil
		},
	}
	reg, _ := registry.New(registry.Options{Storage: memory.New(memory.Options{}),
		Admission: admission.Chain{Mutating: []admission.Mutator{label}, Validating: []admission.Validator{color}}})
	defer reg.Close()
	reg.Register(&registry.Resource{Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets", Namespaced: true})
	widgets, _ := registry.NewClient[map[string]any](reg, "example.com/v1", "widgets")

	ctx := context.Background()
	w, _ := widgets.Create(ctx, "default", &map[string]any{"metadata": map[string]any{"name": "red"}, "spec": map[string]any{"color": "red"}})
	fmt.Println((*w)["metadata"].(map[string]any)["labels"])
	_, err := widgets.Create(ctx, "default", &map[string]any{"metadata": map[string]any{"name": "plain"}})
	fmt.Println(err)
	// Output:
	// map[admitted:yes]
	// widgets.example.com "plain" is forbidden: a widget needs a color
}

// Resources come and go while the registry serves: Register, then
// Unregister, with no restart; the next request sees the change.
func ExampleRegistry_Unregister() {
	reg, _ := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
	defer reg.Close()
	srv := httptest.NewServer(reg)
	defer srv.Close()
	get := func() int {
		resp, _ := http.Get(srv.URL + "/apis/example.com/v1/gadgets")
		resp.Body.Close()
		return resp.StatusCode
	}
	fmt.Println("before:", get())
	reg.Register(&registry.Resource{Group: "example.com", Version: "v1", Kind: "Gadget", Plural: "gadgets"})
	fmt.Println("registered:", get())
	reg.Unregister("example.com", "v1", "gadgets")
	fmt.Println("unregistered:", get())
	// Output:
	// before: 404
	// registered: 200
	// unregistered: 404
}

// A CustomResourceDefinition created through the API is served by the
// time its create returns.
func ExampleRegistry_InstallCRDs() {
	reg, _ := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
	defer reg.Close()
	crds, _ := schema.ParseCRDs([]byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: crontabs.stable.example.com}
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: crontabs, kind: CronTab}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object}}
`))
	if err := reg.InstallCRDs(context.Background(), crds...); err != nil {
		fmt.Println(err)
		return
	}
	c, _ := registry.NewClient[map[string]any](reg, "stable.example.com/v1", "crontabs")
	out, err := c.Create(context.Background(), "default", &map[string]any{
		"apiVersion": "stable.example.com/v1", "kind": "CronTab",
		"metadata": map[string]any{"name": "every-minute"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println((*out)["metadata"].(map[string]any)["namespace"], (*out)["apiVersion"])
	// Output:
	// default stable.example.com/v1
}
