package registry

import (
	"encoding/json"
	"testing"
)

func TestAccessorError(t *testing.T) {
	tests := []struct {
		name, body, want string // want: the error's detail, "" for none
	}{
		{"a list", `{"spec":[1]}`, ".spec.replicas accessor error: [1] is of the type []interface {}, expected map[string]interface{}"},
		{"a string", `{"spec":"x"}`, ".spec.replicas accessor error: x is of the type string, expected map[string]interface{}"},
		{"a number", `{"spec":3}`, ".spec.replicas accessor error: 3 is of the type int64, expected map[string]interface{}"},
		{"a bool", `{"spec":true}`, ".spec.replicas accessor error: true is of the type bool, expected map[string]interface{}"},
		{"an object", `{"spec":{"replicas":"x"}}`, ""},
		{"null", `{"spec":null}`, ""},
		{"absent", `{}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, err := decodeObject([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			got := accessorError(obj, ".spec.replicas")
			switch {
			case tt.want == "" && got != nil:
				b, _ := json.Marshal(got)
				t.Errorf("got %s; want none", b)
			case tt.want != "" && (got == nil || got.Detail != tt.want || got.Field != ".spec.replicas"):
				t.Errorf("got %+v; want detail %q on .spec.replicas", got, tt.want)
			}
		})
	}
}
