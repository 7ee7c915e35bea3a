package patch

import (
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/kapi-dev/kapi/internal/weakmemo"
	"github.com/kapi-dev/kapi/schema"
)

// compiledSchema is what a FieldManager derives from its schema alone:
// the structured-merge-diff type, the fieldsV1 keys, the safe types and
// the typed zero value. It is immutable once made, and shared by every
// FieldManager built on the same *schema.Schema in the process, whatever
// its apiVersion and options (which NewFieldManager applies per
// FieldManager). Nothing in it holds the schema, so a schema nobody uses
// any more (a CRD's, replaced when the CRD changes) takes its entry with
// it when collected.
//
// Example: package builtin hands every Registry the same *schema.Schema
// for apps/v1 Deployment, and the registry the same merged schema for it
// (registry's mergeSchema); the first Environment of a test binary
// converts it to structured-merge-diff's form, the other hundred find it
// here. Each still gets its own FieldManager, with nothing in it another
// can change.
type compiledSchema struct {
	typ  typed.ParseableType
	keys fieldKeys
	safe safeTypes
	zero map[string]any // typedZero's, never modified
}

// compiledSchemas are the compiled schemas by schema, for as long as the
// schema lives.
var compiledSchemas weakmemo.Memo[schema.Schema, *compiledSchema]

func compileSchema(s *schema.Schema) (*compiledSchema, error) {
	t, err := s.SMD()
	if err != nil {
		return nil, err
	}
	return &compiledSchema{typ: t, keys: newFieldKeys(t.Schema), safe: newSafeTypes(t.Schema), zero: typedZero(s)}, nil
}
