package admission

import (
	"context"
	"errors"
	"testing"
)

func TestChain(t *testing.T) {
	deny := errors.New("no")
	typed := &Error{Code: 422, Reason: "Invalid", Message: "bad widget"}
	create := Attributes{Operation: Create, Group: "example.com", Resource: "widgets", Name: "w"}
	tests := []struct {
		name     string
		hook     *Hook
		attrs    Attributes
		wantCode int    // 0: admitted
		wantMsg  string // of the denial
		wantRan  bool
	}{
		{name: "admits", hook: &Hook{}, attrs: create, wantRan: true},
		{name: "plain error is 403", hook: &Hook{}, attrs: create, wantRan: true, wantCode: 403,
			wantMsg: `widgets.example.com "w" is forbidden: no`},
		{name: "core group", hook: &Hook{}, attrs: Attributes{Operation: Delete, Resource: "configmaps", Name: "c"}, wantRan: true, wantCode: 403,
			wantMsg: `configmaps "c" is forbidden: no`},
		{name: "generateName before a name", hook: &Hook{}, wantRan: true, wantCode: 403,
			attrs:   Attributes{Operation: Create, Resource: "configmaps", Object: map[string]any{"metadata": map[string]any{"generateName": "c-"}}},
			wantMsg: `configmaps "c-" is forbidden: no`},
		{name: "typed error keeps its code", hook: &Hook{}, attrs: create, wantRan: true, wantCode: 422, wantMsg: "bad widget"},
		{name: "rule by operation", hook: &Hook{Rules: []Rule{{Operations: []Operation{Update}}}}, attrs: create},
		{name: "rule by group", hook: &Hook{Rules: []Rule{{Groups: []string{""}}}}, attrs: create},
		{name: "rule by resource", hook: &Hook{Rules: []Rule{{Resources: []string{"gadgets"}}}}, attrs: create},
		{name: "resource rule skips subresources", hook: &Hook{Rules: []Rule{{Resources: []string{"widgets"}}}},
			attrs: Attributes{Operation: Update, Group: "example.com", Resource: "widgets", Subresource: "status"}},
		{name: "subresource rule", hook: &Hook{Rules: []Rule{{Resources: []string{"*/status"}}}}, wantRan: true,
			attrs: Attributes{Operation: Update, Group: "example.com", Resource: "widgets", Subresource: "status"}},
		{name: "side effects fail dry run", hook: &Hook{HookName: "audit", SideEffects: true}, wantCode: 400,
			attrs:   Attributes{Operation: Create, Resource: "widgets", DryRun: true},
			wantMsg: `admission webhook "audit" does not support dry run`},
		{name: "side effects without dry run", hook: &Hook{HookName: "audit", SideEffects: true}, attrs: create, wantRan: true},
		{name: "dry run without side effects", hook: &Hook{}, attrs: Attributes{Operation: Create, Resource: "widgets", DryRun: true}, wantRan: true},
	}
	for _, tt := range tests {
		for _, stage := range []string{"mutating", "validating"} {
			t.Run(tt.name+"/"+stage, func(t *testing.T) {
				ran := false
				fn := func(context.Context, *Attributes) error {
					ran = true
					switch tt.wantMsg {
					case "":
						return nil
					case "bad widget":
						return typed
					}
					return deny
				}
				h := *tt.hook
				var c Chain
				if stage == "mutating" {
					h.Mutate = fn
					c.Mutating = []Mutator{&h}
				} else {
					h.Check = fn
					c.Validating = []Validator{&h}
				}
				a := tt.attrs
				err := c.Admit(context.Background(), &a)
				if stage == "validating" {
					err = c.Validate(context.Background(), &a)
				}
				if ran != tt.wantRan {
					t.Errorf("hook ran: got %v; want %v", ran, tt.wantRan)
				}
				var e *Error
				switch {
				case tt.wantCode == 0 && err != nil:
					t.Errorf("got %v; want admitted", err)
				case tt.wantCode != 0 && !errors.As(err, &e):
					t.Errorf("got %v; want an *Error", err)
				case tt.wantCode != 0 && (e.Code != tt.wantCode || e.Message != tt.wantMsg):
					t.Errorf("got %d %q; want %d %q", e.Code, e.Message, tt.wantCode, tt.wantMsg)
				}
			})
		}
	}
}

func TestChainOrder(t *testing.T) {
	var got []string
	hook := func(name string, fail bool) *Hook {
		f := func(context.Context, *Attributes) error {
			got = append(got, name)
			if fail {
				return errors.New(name)
			}
			return nil
		}
		return &Hook{HookName: name, Mutate: f, Check: f}
	}
	c := Chain{Mutating: []Mutator{hook("m1", false), hook("m2", true), hook("m3", false)}, Validating: []Validator{hook("v1", false)}}
	a := &Attributes{Operation: Create, Resource: "widgets", Name: "w"}
	if err := c.Admit(context.Background(), a); err == nil {
		t.Fatal("got admitted; want m2's denial")
	}
	if err := c.Validate(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if want := []string{"m1", "m2", "v1"}; !equal(got, want) {
		t.Errorf("got %v; want %v", got, want)
	}
	if !(&Chain{}).Empty() || c.Empty() {
		t.Error("Empty: got wrong answer")
	}
}

func TestDryRunError(t *testing.T) {
	c := Chain{Validating: []Validator{&Hook{HookName: "x", SideEffects: true}}}
	err := c.Validate(context.Background(), &Attributes{DryRun: true})
	if !errors.Is(err, ErrDryRunUnsupported) {
		t.Errorf("got %v; want ErrDryRunUnsupported", err)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
