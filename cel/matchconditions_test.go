package cel

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/registry/admission"
	"github.com/kapi-dev/kapi/registry/admission/webhook"
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
