package request_test

import (
	"fmt"
	"net/url"

	"github.com/kapi-dev/kapi/registry/request"
)

func ExampleParse() {
	u, _ := url.Parse("/apis/example.com/v1/namespaces/a/widgets?watch=true")
	info, _ := request.Parse("GET", u)
	fmt.Println(info.Verb, info.APIGroup, info.Resource, info.Namespace)
	// Output: watch example.com widgets a
}
