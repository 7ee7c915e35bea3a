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
