package codec_test

import (
	"fmt"

	"github.com/kapi-dev/kapi/codec"
)

func Example() {
	// What a list endpoint can produce: plain JSON, or a Table for kubectl.
	offers := []codec.MediaType{
		codec.MustParseMediaType("application/json"),
		codec.MustParseMediaType("application/json;as=Table;g=meta.k8s.io;v=v1"),
	}
	for _, header := range []string{
		"application/json;as=Table;v=v1;g=meta.k8s.io,application/json", // kubectl get
		"application/vnd.kubernetes.protobuf, */*",                      // client-go
		"application/yaml",
		"application/json;q=abc",
	} {
		accept, err := codec.ParseAccept(header)
		if err != nil {
			fmt.Println("406:", err)
			continue
		}
		if mt, ok := codec.Negotiate(accept, offers); ok {
			fmt.Println("200:", mt)
		} else {
			fmt.Println("406:", codec.NotAcceptable(offers[:1]))
		}
	}
	// Output:
	// 200: application/json;as=Table;g=meta.k8s.io;v=v1
	// 200: application/json
	// 406: only the following media types are accepted: application/json
	// 406: invalid Accept header "application/json;q=abc": invalid q value "abc"
}
