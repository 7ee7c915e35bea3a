package rbac

import (
	"cmp"
	"slices"
)

// AggregatedRules is what kube's clusterrole-aggregation controller
// writes into cr.Rules: for each of cr's selectors in turn, the
// ClusterRoles of all it matches (by labels, cr itself excepted) in
// order of name, and their rules in order, each rule once (nil and empty
// lists are equal). A selector that does not Validate matches nothing
// (kube's object validation refuses it). The result is empty, not nil,
// for an aggregating role that matches none, and nil when cr has no
// aggregationRule (the controller leaves such a role alone).
func AggregatedRules(cr ClusterRole, all []ClusterRole) []PolicyRule {
	if cr.AggregationRule == nil {
		return nil
	}
	rules := []PolicyRule{}
	for _, sel := range cr.AggregationRule.ClusterRoleSelectors {
		var matched []*ClusterRole
		for i := range all {
			if all[i].Metadata.Name != cr.Metadata.Name && sel.Matches(all[i].Metadata.Labels) {
				matched = append(matched, &all[i])
			}
		}
		slices.SortFunc(matched, func(x, y *ClusterRole) int { return cmp.Compare(x.Metadata.Name, y.Metadata.Name) })
		for _, m := range matched {
			for _, r := range m.Rules {
				if !slices.ContainsFunc(rules, func(x PolicyRule) bool { return x.Equal(r) }) {
					rules = append(rules, r)
				}
			}
		}
	}
	return rules
}

// Equal reports whether two rules are the same, a nil list equal to an
// empty one (apimachinery's semantic equality).
func (r PolicyRule) Equal(o PolicyRule) bool {
	return slices.Equal(r.Verbs, o.Verbs) && slices.Equal(r.APIGroups, o.APIGroups) &&
		slices.Equal(r.Resources, o.Resources) && slices.Equal(r.ResourceNames, o.ResourceNames) &&
		slices.Equal(r.NonResourceURLs, o.NonResourceURLs)
}

// RulesEqual reports whether two rule lists are the same (see Equal): the
// controller writes a ClusterRole only when AggregatedRules differs from
// its Rules.
func RulesEqual(a, b []PolicyRule) bool {
	return slices.EqualFunc(a, b, PolicyRule.Equal)
}

// Aggregating returns the names of the ClusterRoles of all that have an
// aggregationRule, in order of name: those the controller re-computes
// when any ClusterRole changes (kube's controller enqueues them all).
func Aggregating(all []ClusterRole) []string {
	var names []string
	for i := range all {
		if all[i].AggregationRule != nil {
			names = append(names, all[i].Metadata.Name)
		}
	}
	slices.Sort(names)
	return names
}

// ClusterRoles returns the ClusterRoles z holds, in order of name (the
// registry's aggregation controller reads them as kube's reads its
// lister). The roles are z's: do not modify them.
func (z *Authorizer) ClusterRoles() []ClusterRole {
	s := z.state.Load()
	out := make([]ClusterRole, 0, s.clusterRoles.len())
	s.clusterRoles.all(func(_ string, r *ClusterRole) { out = append(out, *r) })
	slices.SortFunc(out, func(x, y ClusterRole) int { return cmp.Compare(x.Metadata.Name, y.Metadata.Name) })
	return out
}

// Reaggregate runs the aggregation controller over all until nothing
// changes (an aggregated role may itself be aggregated: admin gathers
// edit, which gathers view): it returns the ClusterRoles whose Rules
// change, with their new Rules, in order of name, for the registry to
// write. all is not modified.
func Reaggregate(all []ClusterRole) []ClusterRole {
	cur := slices.Clone(all)
	slices.SortFunc(cur, func(x, y ClusterRole) int { return cmp.Compare(x.Metadata.Name, y.Metadata.Name) })
	changed := map[int]bool{}
	for round := 0; round <= len(cur); round++ {
		again := false
		for i := range cur {
			if cur[i].AggregationRule == nil {
				continue
			}
			if rules := AggregatedRules(cur[i], cur); !RulesEqual(rules, cur[i].Rules) {
				cur[i].Rules = rules
				changed[i], again = true, true
			}
		}
		if !again {
			break
		}
	}
	var out []ClusterRole
	for i := range cur {
		if changed[i] {
			out = append(out, cur[i])
		}
	}
	return out
}
