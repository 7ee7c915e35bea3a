package schema_test

import (
	"slices"
	"testing"

	"github.com/kapi-dev/kapi/schema"
)

func TestRulePaths(t *testing.T) {
	rule := []schema.Rule{{Rule: "self.a > 0"}}
	for _, tc := range []struct {
		name string
		s    *schema.Schema
		want []string
	}{
		{"nil", nil, nil},
		{"no rules", &schema.Schema{Properties: map[string]*schema.Schema{"spec": {Items: &schema.Schema{}}}}, nil},
		{"root", &schema.Schema{Ext: schema.Ext{Validations: rule}}, []string{"<root>"}},
		{"nested, in path order", &schema.Schema{Properties: map[string]*schema.Schema{
			"spec":   {Properties: map[string]*schema.Schema{"ports": {Items: &schema.Schema{Ext: schema.Ext{Validations: rule}}}}},
			"status": {AdditionalProperties: &schema.Schema{Ext: schema.Ext{Validations: rule}}},
			"a":      {Ext: schema.Ext{Validations: rule}},
		}}, []string{"a", "spec.ports[*]", "status[*]"}},
	} {
		if got := tc.s.RulePaths(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: RulePaths = %q; want %q", tc.name, got, tc.want)
		}
	}
}
