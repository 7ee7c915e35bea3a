package registry_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/kapi-dev/kapi/registry"
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
