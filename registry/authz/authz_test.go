package authz

import (
	"context"
	"errors"
	"testing"

	"github.com/kapi-dev/kapi/registry/request"
)

func fixed(d Decision, reason string, err error) Authorizer {
	return Func(func(context.Context, Attributes) (Decision, string, error) { return d, reason, err })
}

func TestUnion(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name       string
		members    []Authorizer
		want       Decision
		wantReason string
		wantErr    bool
	}{
		{"empty", nil, NoOpinion, "", false},
		{"first allow wins", []Authorizer{fixed(Allow, "a", nil), fixed(Deny, "d", nil)}, Allow, "a", false},
		{"deny stops", []Authorizer{fixed(NoOpinion, "x", nil), fixed(Deny, "d", nil), AlwaysAllow}, Deny, "d", false},
		{"reasons joined", []Authorizer{fixed(NoOpinion, "x", nil), fixed(NoOpinion, "y", nil)}, NoOpinion, "x\ny", false},
		{"error then allow", []Authorizer{fixed(NoOpinion, "", boom), AlwaysAllow}, Allow, "", false},
		{"error kept", []Authorizer{fixed(NoOpinion, "", boom)}, NoOpinion, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, reason, err := Union(tt.members...).Authorize(context.Background(), Attributes{})
			if d != tt.want || reason != tt.wantReason || (err != nil) != tt.wantErr {
				t.Errorf("got %v %q %v; want %v %q error=%v", d, reason, err, tt.want, tt.wantReason, tt.wantErr)
			}
		})
	}
}

func TestPrivileged(t *testing.T) {
	p := Privileged(request.SystemPrivileged)
	for _, tt := range []struct {
		user *request.User
		want Decision
	}{
		{&request.User{Name: "admin", Groups: []string{"system:masters"}}, Allow},
		{&request.User{Name: "alice", Groups: []string{"dev"}}, NoOpinion},
		{nil, NoOpinion},
	} {
		if d, _, _ := p.Authorize(context.Background(), Attributes{User: tt.user}); d != tt.want {
			t.Errorf("user %+v: got %v; want %v", tt.user, d, tt.want)
		}
	}
}
