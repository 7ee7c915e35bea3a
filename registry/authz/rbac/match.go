package rbac

import (
	"fmt"
	"strings"

	"github.com/kapi-dev/kapi/registry/authz"
)

// RuleAllows reports whether rule allows the request a, as kube's
// rbac.RuleAllows: for a resource request the verb, the API group, the
// resource (with its subresource as "resource/subresource") and the name
// must each match; for a non-resource request the verb and the path.
func RuleAllows(a *authz.Attributes, rule *PolicyRule) bool {
	if a.ResourceRequest {
		return VerbMatches(rule, a.Verb) &&
			APIGroupMatches(rule, a.APIGroup) &&
			ResourceMatches(rule, a.Resource, a.Subresource) &&
			ResourceNameMatches(rule, a.Name)
	}
	return VerbMatches(rule, a.Verb) && NonResourceURLMatches(rule, a.Path)
}

// RulesAllow reports whether any of rules allows a.
func RulesAllow(a *authz.Attributes, rules ...PolicyRule) bool {
	for i := range rules {
		if RuleAllows(a, &rules[i]) {
			return true
		}
	}
	return false
}

// VerbMatches reports whether the rule lists verb or "*".
func VerbMatches(rule *PolicyRule, verb string) bool {
	for _, v := range rule.Verbs {
		if v == VerbAll || v == verb {
			return true
		}
	}
	return false
}

// APIGroupMatches reports whether the rule lists group or "*".
func APIGroupMatches(rule *PolicyRule, group string) bool {
	for _, g := range rule.APIGroups {
		if g == APIGroupAll || g == group {
			return true
		}
	}
	return false
}

// ResourceMatches reports whether the rule lists "*", the resource (when
// there is no subresource), "resource/subresource", or "*/subresource".
// As in kube, "pods" does not match pods/status, and there is no
// "pods/*": a subresource is matched only by name or by "*/name".
func ResourceMatches(rule *PolicyRule, resource, subresource string) bool {
	for _, r := range rule.Resources {
		if r == ResourceAll {
			return true
		}
		if subresource == "" {
			if r == resource {
				return true
			}
			continue
		}
		// r == resource+"/"+subresource, without building the string.
		if len(r) == len(resource)+1+len(subresource) && r[len(resource)] == '/' &&
			strings.HasPrefix(r, resource) && strings.HasSuffix(r, subresource) {
			return true
		}
		if len(r) == len(subresource)+2 && strings.HasPrefix(r, "*/") && strings.HasSuffix(r, subresource) {
			return true
		}
	}
	return false
}

// ResourceNameMatches reports whether the rule lists no names (all) or
// name.
func ResourceNameMatches(rule *PolicyRule, name string) bool {
	if len(rule.ResourceNames) == 0 {
		return true
	}
	for _, n := range rule.ResourceNames {
		if n == name {
			return true
		}
	}
	return false
}

// NonResourceURLMatches reports whether the rule lists "*", path, or a
// prefix of path followed by "*" ("/apis/*" matches "/apis/g" but not
// "/apis").
func NonResourceURLMatches(rule *PolicyRule, path string) bool {
	for _, u := range rule.NonResourceURLs {
		if u == NonResourceAll || u == path {
			return true
		}
		if strings.HasSuffix(u, "*") && strings.HasPrefix(path, strings.TrimRight(u, "*")) {
			return true
		}
	}
	return false
}

// CompactString is kube's compact form of a rule, used in the escalation
// error: the non-empty fields with their values quoted, as
// {APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "list"]}.
func (r PolicyRule) CompactString() string {
	var parts []string
	var args []any
	add := func(name string, v []string) {
		if len(v) > 0 {
			parts = append(parts, name+":%q")
			args = append(args, v)
		}
	}
	add("APIGroups", r.APIGroups)
	add("Resources", r.Resources)
	add("NonResourceURLs", r.NonResourceURLs)
	add("ResourceNames", r.ResourceNames)
	add("Verbs", r.Verbs)
	return fmt.Sprintf("{"+strings.Join(parts, ", ")+"}", args...)
}
