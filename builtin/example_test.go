package builtin_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/kapi-dev/kapi/builtin"
	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/storage/memory"
)

// A registry serving the built-in kinds: a Deployment is defaulted as
// kube-apiserver defaults it.
func Example() {
	r, err := registry.New(registry.Options{Storage: memory.New(memory.Options{})})
	if err != nil {
		panic(err)
	}
	if err := builtin.Register(r, builtin.Options{ServiceCIDR: "10.0.0.0/24"}); err != nil {
		panic(err)
	}
	body := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},
	  "spec":{"selector":{"matchLabels":{"app":"web"}},
	    "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}}}}`
	req := httptest.NewRequestWithContext(context.Background(), http.MethodPost, "/apis/apps/v1/namespaces/default/deployments", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	out := w.Body.String()
	fmt.Println(w.Code)
	for _, want := range []string{`"replicas":1`, `"type":"RollingUpdate"`, `"imagePullPolicy":"IfNotPresent"`, `"revisionHistoryLimit":10`} {
		fmt.Println(want, strings.Contains(out, want))
	}
	// Output:
	// 201
	// "replicas":1 true
	// "type":"RollingUpdate" true
	// "imagePullPolicy":"IfNotPresent" true
	// "revisionHistoryLimit":10 true
}
