package authz_test

import (
	"context"
	"fmt"
	"net/url"

	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/request"
)

func ExampleUnion() {
	readOnly := authz.Func(func(_ context.Context, a authz.Attributes) (authz.Decision, string, error) {
		switch a.Verb {
		case "get", "list", "watch":
			return authz.Allow, "", nil
		}
		return authz.NoOpinion, "read-only", nil
	})
	z := authz.Union(authz.Privileged(request.SystemPrivileged), readOnly)
	u, _ := url.Parse("/api/v1/namespaces/a/configmaps")
	for _, method := range []string{"GET", "POST"} {
		info, _ := request.Parse(method, u)
		d, reason, _ := z.Authorize(context.Background(), authz.AttributesFrom(&request.User{Name: "alice"}, info))
		fmt.Printf("%s: %v (%q)\n", info.Verb, d, reason)
	}
	// Output:
	// list: Allow ("")
	// create: NoOpinion ("read-only")
}
