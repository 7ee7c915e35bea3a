package jsoncmp

import "github.com/kapi-dev/kapi/internal/jsontree"

// DecodeTree decodes one JSON value as kapi holds it (maps, []any,
// strings, bools, nil, numbers as json.Number) on jsontext's token reader,
// and returns the duplicate fields it met in kube's form
// (`duplicate field "spec.ports[0].port"`) in the same pass. Data after
// the value is an error. It was this package's prototype of kapi's
// decoder; it is now kapi's own (internal/jsontree), measured here
// beside the other libraries.
func DecodeTree(b []byte) (any, []string, error) {
	return jsontree.Decode(b, jsontree.Options{Numbers: jsontree.Exact, Duplicates: true})
}
