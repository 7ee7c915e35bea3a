package rv_test

import (
	"errors"
	"fmt"

	"github.com/kapi-dev/kapi/rv"
)

// Resolve the read-related query parameters of a list, then carry the
// snapshot to the next page in a continue token.
func ExampleOptions_Resolve() {
	req, err := rv.Options{ResourceVersion: "42", Limit: 500}.Resolve()
	fmt.Println(req.Match, req.Revision, req.Limit, err)

	_, err = rv.Options{ResourceVersionMatch: rv.MatchExact}.Resolve()
	fmt.Println(errors.Is(err, rv.ErrInvalid), err)

	_, err = rv.Options{ResourceVersion: "42", Continue: "abc"}.Resolve()
	fmt.Println(errors.Is(err, rv.ErrBadRequest), err)

	tokens := rv.Tokens{Secret: []byte("shared by every replica")}
	next := tokens.Encode("/apps/deployments/", rv.Token{Revision: req.Revision, Key: "prod/web", Offset: 500})
	tok, err := tokens.Decode("/apps/deployments/", next)
	fmt.Println(tok.Revision, tok.Key, tok.Offset, err)
	_, err = tokens.Decode("/apps/replicasets/", next)
	fmt.Println(err)
	// Output:
	// Exact 42 500 <nil>
	// true ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided
	// true specifying resource version is not allowed when using continue
	// 42 prod/web 500 <nil>
	// invalid continue token: it was not issued for this collection or was altered; start the list again without continue
}
