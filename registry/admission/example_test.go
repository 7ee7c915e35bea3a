package admission_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/kapi-dev/kapi/registry/admission"
)

// A chain with a hook that labels every new widget and one that denies
// widgets without an owner label.
func Example() {
	label := &admission.Hook{
		HookName: "label",
		Rules:    []admission.Rule{{Operations: []admission.Operation{admission.Create}, Resources: []string{"widgets"}}},
		Mutate: func(_ context.Context, a *admission.Attributes) error {
			meta := a.Object["metadata"].(map[string]any)
			meta["labels"] = map[string]any{"team": "blue"}
			a.AddWarning("labelled team=blue")
			return nil
		},
	}
	owner := &admission.Hook{
		HookName: "owner",
		Check: func(_ context.Context, a *admission.Attributes) error {
			labels, _ := a.Object["metadata"].(map[string]any)["labels"].(map[string]any)
			if labels["owner"] == nil {
				return errors.New("an owner label is required")
			}
			return nil
		},
	}
	chain := admission.Chain{Mutating: []admission.Mutator{label}, Validating: []admission.Validator{owner}}

	ctx := context.Background()
	a := &admission.Attributes{Operation: admission.Create, Group: "example.com", Version: "v1", Kind: "Widget",
		Resource: "widgets", Namespace: "default", Object: map[string]any{"metadata": map[string]any{"name": "w"}}}
	if err := chain.Admit(ctx, a); err != nil {
		fmt.Println(err)
	}
	fmt.Println(a.Object["metadata"].(map[string]any)["labels"], a.Warnings())
	err := chain.Validate(ctx, a)
	var denial *admission.Error
	if errors.As(err, &denial) {
		fmt.Println(denial.Code, denial.Message)
	}
	// Output:
	// map[team:blue] [labelled team=blue]
	// 403 widgets.example.com "w" is forbidden: an owner label is required
}
