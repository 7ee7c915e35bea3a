package cel

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/registry/admission"
	"github.com/kapi-dev/kapi/registry/admission/webhook"
	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/request"
)

func TestMatchConditions(t *testing.T) {
	attrs := func(name string, labels map[string]any) webhook.ConditionInput {
		a := &admission.Attributes{Operation: admission.Create, Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: "default", Name: name,
			User:   &request.User{Name: "alice", Groups: []string{"devs"}},
			Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name, "labels": labels}, "data": map[string]any{"n": "1"}}}
		return webhook.ConditionInput{Attributes: a, Version: "v1", Kind: "ConfigMap"}
	}
	tests := []struct {
		name    string
		exprs   []string
		policy  string
		in      webhook.ConditionInput
		want    bool
		wantErr string
	}{
		{name: "object", exprs: []string{"object.metadata.name != 'skip'"}, in: attrs("a", nil), want: true},
		{name: "object false", exprs: []string{"object.metadata.name != 'skip'"}, in: attrs("skip", nil)},
		{name: "request", exprs: []string{"request.userInfo.username == 'alice'", "request.operation == 'CREATE'", "'devs' in request.userInfo.groups"}, in: attrs("a", nil), want: true},
		{name: "request kind", exprs: []string{"request.kind.kind == 'ConfigMap' && request.resource.resource == 'configmaps'"}, in: attrs("a", nil), want: true},
		{name: "oldObject null on create", exprs: []string{"oldObject == null"}, in: attrs("a", nil), want: true},
		{name: "evaluation error fails closed", exprs: []string{"object.metadata.labels.missing == 'x'"}, policy: "Fail", in: attrs("a", map[string]any{}), wantErr: "no such key"},
		{name: "evaluation error ignored", exprs: []string{"object.metadata.labels.missing == 'x'"}, policy: "Ignore", in: attrs("a", map[string]any{})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var conds []webhook.MatchCondition
			for i, e := range tt.exprs {
				conds = append(conds, webhook.MatchCondition{Name: string(rune('a' + i)), Expression: e})
			}
			policy := tt.policy
			if policy == "" {
				policy = "Fail"
			}
			c, err := CompileMatchConditions(conds, policy)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Match(context.Background(), tt.in)
			switch {
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("got %v, %v; want an error with %q", got, err, tt.wantErr)
			case tt.wantErr == "" && (err != nil || got != tt.want):
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestMatchConditionsCompileError(t *testing.T) {
	for _, tt := range []struct {
		expr, want string
	}{
		{"object.metadata.name", "must evaluate to bool"},
		{"object.nope(", "Syntax error"},
		{"params.x == 1", "undeclared reference to 'params'"},
	} {
		_, err := CompileMatchConditions([]webhook.MatchCondition{{Name: "ok", Expression: "true"}, {Name: "bad", Expression: tt.expr}}, "Fail")
		var ce *webhook.ConditionError
		if !errors.As(err, &ce) || ce.Index != 1 || !strings.Contains(ce.Detail, tt.want) {
			t.Errorf("%s: got %v; want a ConditionError at 1 with %q", tt.expr, err, tt.want)
		}
	}
}

// TestMatchConditionsAuthorizer: the authorizer variable asks the
// registry's authorizer (ConditionInput.Authorizer) as the request's
// user; without one, an expression that calls it fails.
func TestMatchConditionsAuthorizer(t *testing.T) {
	var asked []authz.Attributes
	az := authz.Func(func(_ context.Context, a authz.Attributes) (authz.Decision, string, error) {
		asked = append(asked, a)
		if a.User != nil && a.User.Name == "alice" && a.Verb == "get" && a.Resource == "secrets" && a.Namespace == "default" {
			return authz.Allow, "", nil
		}
		if a.Verb == "create" && a.Resource == "configmaps" {
			return authz.Allow, "", nil
		}
		return authz.NoOpinion, "", nil
	})
	in := func(az authz.Authorizer) webhook.ConditionInput {
		a := &admission.Attributes{Operation: admission.Create, Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: "default", Name: "a",
			User:   &request.User{Name: "alice", UID: "uid-alice", Groups: []string{"devs"}},
			Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}}}
		return webhook.ConditionInput{Attributes: a, Version: "v1", Kind: "ConfigMap", Authorizer: az}
	}
	tests := []struct {
		name    string
		expr    string
		az      authz.Authorizer
		want    bool
		wantErr string
		asked   string
	}{
		{name: "allowed", expr: "authorizer.group('').resource('secrets').namespace('default').check('get').allowed()", az: az, want: true, asked: "alice get /secrets default"},
		{name: "not allowed", expr: "authorizer.group('').resource('secrets').namespace('default').check('delete').allowed()", az: az, asked: "alice delete /secrets default"},
		{name: "other group", expr: "!authorizer.group('apps').resource('deployments').check('list').allowed()", az: az, want: true, asked: "alice list apps/deployments "},
		{name: "requestResource", expr: "authorizer.requestResource.check('create').allowed()", az: az, want: true, asked: "alice create /configmaps default"},
		{name: "unbound", expr: "authorizer.group('').resource('secrets').check('get').allowed()", wantErr: "authorizer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked = nil
			c, err := CompileMatchConditions([]webhook.MatchCondition{{Name: "a", Expression: tt.expr}}, "Fail")
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Match(context.Background(), in(tt.az))
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("got %v, %v; want an error with %q", got, err, tt.wantErr)
				}
				return
			case err != nil || got != tt.want:
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
			}
			if len(asked) != 1 {
				t.Fatalf("the authorizer was asked %d times; want once", len(asked))
			}
			a := asked[0]
			if s := a.User.Name + " " + a.Verb + " " + a.APIGroup + "/" + a.Resource + " " + a.Namespace; s != tt.asked || !a.ResourceRequest {
				t.Errorf("the authorizer was asked %q (resource request %v); want %q", s, a.ResourceRequest, tt.asked)
			}
		})
	}
}
