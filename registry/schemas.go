package registry

import (
	"sync"

	"github.com/kapi-dev/kapi/internal/weakmemo"
	"github.com/kapi-dev/kapi/schema"
)

// sharedSchemas are the schemas of the registry's own kinds, made once per
// process and shared by every Registry, as package builtin shares its
// kinds' schemas: a Registry never modifies a Resource's Schema, so the
// same *schema.Schema serves them all, and what is compiled from it
// (mergeSchema's merge, the field manager's structured-merge-diff types,
// patch's compiledSchema) is compiled once. Each Registry still has its
// own Resources, store and field managers: nothing it changes is shared.
var sharedSchemas = struct {
	namespace, role, clusterRole, roleBinding, clusterRoleBinding        func() *schema.Schema
	mutatingWebhookConfiguration, validatingWebhookConfiguration         func() *schema.Schema
	selfSubjectAccessReview, selfSubjectRulesReview, subjectAccessReview func() *schema.Schema
	localSubjectAccessReview, selfSubjectReview, tokenReview             func() *schema.Schema
}{
	namespace:                      sync.OnceValue(schema.Namespace),
	role:                           sync.OnceValue(schema.Role),
	clusterRole:                    sync.OnceValue(schema.ClusterRole),
	roleBinding:                    sync.OnceValue(schema.RoleBinding),
	clusterRoleBinding:             sync.OnceValue(schema.ClusterRoleBinding),
	mutatingWebhookConfiguration:   sync.OnceValue(schema.MutatingWebhookConfiguration),
	validatingWebhookConfiguration: sync.OnceValue(schema.ValidatingWebhookConfiguration),
	selfSubjectAccessReview:        sync.OnceValue(schema.SelfSubjectAccessReview),
	selfSubjectRulesReview:         sync.OnceValue(schema.SelfSubjectRulesReview),
	subjectAccessReview:            sync.OnceValue(schema.SubjectAccessReview),
	localSubjectAccessReview:       sync.OnceValue(schema.LocalSubjectAccessReview),
	selfSubjectReview:              sync.OnceValue(schema.SelfSubjectReview),
	tokenReview:                    sync.OnceValue(schema.TokenReview),
}

// schemaFacts are what Register reads from a Resource's schema alone,
// walking all of it: found once per schema while it lives (schemaFactsOf)
// rather than once per Registry.
type schemaFacts struct {
	defaults  *schema.Schema // defaultsOnly; never modified
	rulePaths []string       // the schema's CEL rules' paths; never modified
}

var schemaFactsOf weakmemo.Memo[schema.Schema, schemaFacts]

func factsOf(s *schema.Schema) schemaFacts {
	f, _ := schemaFactsOf.Get(s, func(s *schema.Schema) (schemaFacts, error) {
		return schemaFacts{defaults: defaultsOnly(s), rulePaths: s.RulePaths()}, nil
	})
	return f
}
