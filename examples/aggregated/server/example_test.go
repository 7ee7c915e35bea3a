package server_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/kapi-dev/kapi/examples/aggregated/server"
	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/registry/authn"
	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/request"
	"github.com/kapi-dev/kapi/storage/memory"
)

// The aggregated server asks the main API server who a bearer token is
// (TokenReview) and whether that user may do what they ask
// (SubjectAccessReview). Here the main server is a kapi registry too,
// which answers both reviews: alice may create gizmos, nobody else.
func Example() {
	tokens := authn.NewTokens(map[string]request.User{"alice-token": {Name: "alice"}})
	mainAuthn, _ := authn.New(authn.Options{Tokens: tokens, Anonymous: true})
	mainReg, err := registry.New(registry.Options{Storage: memory.New(memory.Options{}), Authenticator: mainAuthn,
		Authorizer: authz.Func(func(_ context.Context, a authz.Attributes) (authz.Decision, string, error) {
			if a.Resource == "tokenreviews" || a.Resource == "subjectaccessreviews" || (a.User.Name == "alice" && a.Resource == "gizmos") {
				return authz.Allow, "", nil
			}
			return authz.NoOpinion, "", nil
		})})
	if err != nil {
		panic(err)
	}
	defer mainReg.Close()
	mainSrv := httptest.NewServer(mainReg)
	defer mainSrv.Close()

	reg, err := server.New(server.Options{
		RequestHeaderCA: x509.NewCertPool(), // kube-aggregator's CA: no front proxy in this example
		Main:            server.Delegate{URL: mainSrv.URL, Client: mainSrv.Client()},
	})
	if err != nil {
		panic(err)
	}
	defer reg.Close()
	srv := httptest.NewServer(reg)
	defer srv.Close()

	for _, token := range []string{"alice-token", ""} {
		req, _ := http.NewRequest("POST", srv.URL+"/apis/fleet.example.com/v1/namespaces/default/gizmos",
			strings.NewReader(`{"apiVersion":"fleet.example.com/v1","kind":"Gizmo","metadata":{"generateName":"g-"},"spec":{"size":1}}`))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Printf("token %q: %s\n", token, resp.Status)
	}
	// Output:
	// token "alice-token": 201 Created
	// token "": 403 Forbidden
}
