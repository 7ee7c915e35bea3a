package rbac

import (
	"testing"

	"github.com/kapi-dev/kapi/registry/authz"
)

func res(verb, group, resource, sub, name string) authz.Attributes {
	return authz.Attributes{ResourceRequest: true, Verb: verb, APIGroup: group, Resource: resource, Subresource: sub, Name: name}
}

func nonRes(verb, path string) authz.Attributes {
	return authz.Attributes{Verb: verb, Path: path}
}

func TestRuleAllows(t *testing.T) {
	pods := PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	tests := []struct {
		name string
		rule PolicyRule
		a    authz.Attributes
		want bool
	}{
		{"verb listed", pods, res("get", "", "pods", "", "x"), true},
		{"verb not listed", pods, res("delete", "", "pods", "", "x"), false},
		{"verb star", PolicyRule{Verbs: []string{"*"}, APIGroups: []string{""}, Resources: []string{"pods"}}, res("escalate", "", "pods", "", ""), true},
		{"group differs", pods, res("get", "apps", "pods", "", ""), false},
		{"group star", PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"pods"}}, res("get", "apps", "pods", "", ""), true},
		{"no groups", PolicyRule{Verbs: []string{"get"}, Resources: []string{"pods"}}, res("get", "", "pods", "", ""), false},
		{"resource differs", pods, res("get", "", "secrets", "", ""), false},
		{"resource star", PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"*"}}, res("get", "", "secrets", "", ""), true},
		{"resource star covers subresource", PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"*"}}, res("get", "", "pods", "log", ""), true},
		{"resource does not cover subresource", pods, res("get", "", "pods", "status", ""), false},
		{"subresource exact", PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods/status"}}, res("get", "", "pods", "status", ""), true},
		{"subresource rule not the resource", PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods/status"}}, res("get", "", "pods", "", ""), false},
		{"subresource of another resource", PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods/status"}}, res("get", "", "nodes", "status", ""), false},
		{"subresource prefix only", PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods/stat"}}, res("get", "", "pods", "status", ""), false},
		{"star subresource", PolicyRule{Verbs: []string{"update"}, APIGroups: []string{"apps"}, Resources: []string{"*/scale"}}, res("update", "apps", "deployments", "scale", ""), true},
		{"star subresource other", PolicyRule{Verbs: []string{"update"}, APIGroups: []string{"apps"}, Resources: []string{"*/scale"}}, res("update", "apps", "deployments", "status", ""), false},
		{"star subresource not the resource", PolicyRule{Verbs: []string{"update"}, APIGroups: []string{"apps"}, Resources: []string{"*/scale"}}, res("update", "apps", "deployments", "", ""), false},
		{"resource slash star is not a wildcard", PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods/*"}}, res("get", "", "pods", "log", ""), false},
		{"resourceNames listed", PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}, ResourceNames: []string{"a", "b"}}, res("get", "", "pods", "", "b"), true},
		{"resourceNames not listed", PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}, ResourceNames: []string{"a"}}, res("get", "", "pods", "", "c"), false},
		{"resourceNames and list", PolicyRule{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"pods"}, ResourceNames: []string{"a"}}, res("list", "", "pods", "", ""), false},
		{"resource rule for non-resource request", pods, nonRes("get", "/api"), false},
		{"url exact", PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}, nonRes("get", "/healthz"), true},
		{"url other", PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}, nonRes("get", "/healthz/etcd"), false},
		{"url star", PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"*"}}, nonRes("get", "/anything"), true},
		{"url prefix star", PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis/*"}}, nonRes("get", "/apis/apps/v1"), true},
		{"url prefix star not the prefix", PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis/*"}}, nonRes("get", "/apis"), false},
		{"url prefix star, no slash", PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/api*"}}, nonRes("get", "/apis"), true},
		{"url verb", PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}, nonRes("post", "/healthz"), false},
		{"url rule for resource request", PolicyRule{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}, res("get", "", "pods", "", ""), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RuleAllows(&tt.a, &tt.rule); got != tt.want {
				t.Errorf("got %v; want %v", got, tt.want)
			}
		})
	}
}

func TestCompactString(t *testing.T) {
	tests := []struct {
		rule PolicyRule
		want string
	}{
		{PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}}, `{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`},
		{PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{"apps"}, Resources: []string{"deployments"}, ResourceNames: []string{"a"}}, `{APIGroups:["apps"], Resources:["deployments"], ResourceNames:["a"], Verbs:["get" "list"]}`},
		{PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}, `{NonResourceURLs:["/healthz"], Verbs:["get"]}`},
		{PolicyRule{}, `{}`},
	}
	for _, tt := range tests {
		if got := tt.rule.CompactString(); got != tt.want {
			t.Errorf("got %s; want %s", got, tt.want)
		}
	}
}
