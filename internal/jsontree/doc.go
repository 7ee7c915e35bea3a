// Package jsontree decodes JSON into the tree kapi holds (map[string]any,
// []any, string, bool, nil and numbers) on the tokenizer of
// github.com/go-json-experiment/json/jsontext (Go 1.27's
// encoding/json/jsontext), about twice as fast as encoding/json's Decoder,
// and reports duplicate object keys in the same pass, as kube's strict
// decoding names them. Input whose strings have no escapes and are valid
// UTF-8, the common case, is read by a byte scanner of its own (fast.go),
// faster still; anything else it leaves to jsontext, which decodes the
// whole input again.
//
// It accepts a subset of what encoding/json accepts and, on what it
// accepts, yields encoding/json's tree: callers decode again with
// encoding/json when Decode fails, for encoding/json's error message. The
// differential fuzz tests of its callers (registry's FuzzDecode,
// storage's FuzzDecodeMap) and this package's FuzzValid hold it to that.
package jsontree
