package authn_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/kapi-dev/kapi/registry/authn"
)

func ExampleParseTokenFile() {
	tokens, err := authn.ParseTokenFile(strings.NewReader(`31ada4fd-adec-460c,alice,1001,"dev,ops"
8b31ad16-0e3d-4d6a,bob,1002
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	u, ok, _ := tokens.AuthenticateToken(context.Background(), "31ada4fd-adec-460c")
	fmt.Println(ok, u.Name, u.UID, u.Groups)

	_, err = authn.ParseTokenFile(strings.NewReader("abc,alice,1\nabc,alice\n"))
	fmt.Println(err)
	// Output:
	// true alice 1001 [dev ops]
	// authn: token file line 2: a token file record must have at least 3 columns (token, user name, user uid), found 2
}

func ExampleNew() {
	tokens, _ := authn.ParseTokenFile(strings.NewReader("s3cret,alice,1001,dev\n"))
	auth, err := authn.New(authn.Options{Tokens: tokens, Anonymous: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, header := range []string{"Bearer s3cret", "", "Bearer wrong"} {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces", nil)
		if header != "" {
			req.Header.Set("Authorization", header)
		}
		u, ok, err := auth.Authenticate(req)
		if err != nil {
			fmt.Printf("%q: 401: %v\n", header, err)
			continue
		}
		fmt.Printf("%q: %v %s %v\n", header, ok, u.Name, u.Groups)
	}
	// Output:
	// "Bearer s3cret": true alice [dev system:authenticated]
	// "": true system:anonymous [system:unauthenticated]
	// "Bearer wrong": 401: authn: invalid bearer token
}
