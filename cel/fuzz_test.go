package cel

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzValidate sends random JSON objects (and random old objects) through
// a fixed set of rules covering transition rules, optionalOldSelf, list
// items, messageExpression and the kube libraries: Validate never panics
// and reports only kube's error types.
func FuzzValidate(f *testing.F) {
	r := mustCompile(f, widgetSchema(f,
		`[{rule: "self.replicas >= 0", messageExpression: "'bad color ' + self.color"},
		  {rule: "self.color == oldSelf.color", message: "immutable"},
		  {rule: "!oldSelf.hasValue() || self.replicas >= oldSelf.value().replicas", optionalOldSelf: true},
		  {rule: "!has(self.size) || quantity(self.size).isLessThan(quantity('1Gi'))", fieldPath: ".size", reason: FieldValueForbidden},
		  {rule: "!has(self.url) || isURL(self.url)"},
		  {rule: "!has(self.tags) || self.tags.isSorted()", reason: FieldValueDuplicate}]`,
		`[{rule: "self.port > 0", message: "bad port"}, {rule: "self.name == oldSelf.name"}]`))
	f.Add(`{"spec":{"replicas":1,"color":"red","ports":[{"port":80}]}}`, `{"spec":{"replicas":2,"color":"blue"}}`)
	f.Add(`{"spec":{"replicas":-1,"size":"2Gi","url":"::","tags":["b","a"]}}`, ``)
	f.Add(`{"spec":{"replicas":"x","ports":[{"port":1.5,"name":3}]}}`, `{"spec":[]}`)
	f.Add(`{"spec":{"size":"1x","replicas":1e400}}`, `null`)
	allowed := map[string]bool{"FieldValueInvalid": true, "FieldValueForbidden": true, "FieldValueRequired": true, "FieldValueDuplicate": true, "InternalError": true}
	f.Fuzz(func(t *testing.T, objJSON, oldJSON string) {
		obj, ok := decodeObject(objJSON)
		if !ok {
			return
		}
		old, _ := decodeObject(oldJSON)
		for _, e := range r.Validate(context.Background(), obj, old) {
			if !allowed[e.Type] || !strings.HasPrefix(e.Field, "spec") && e.Field != "<nil>" {
				t.Errorf("Validate: got %q (type %s); want a kube rule error", e.Error(), e.Type)
			}
		}
	})
}

func decodeObject(s string) (map[string]any, bool) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}
