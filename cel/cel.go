package cel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	kubecel "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"

	"github.com/kapi-dev/kapi/schema"
)

// ErrInvalidRules is what every error of Compile wraps: the schema's
// x-kubernetes-validations are not accepted by kube's CRD validation.
var ErrInvalidRules = errors.New("cel: invalid x-kubernetes-validations")

// CompileError lists the reasons kube's CRD validation refuses a schema's
// rules, with kube's paths and messages:
//
//	openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: "self.replicas >": compilation failed: ERROR: <input>:1:16: Syntax error: ...
//
// It unwraps to ErrInvalidRules.
type CompileError struct {
	Errors []schema.FieldError
}

func (e *CompileError) Error() string {
	msgs := make([]string, len(e.Errors))
	for i, fe := range e.Errors {
		msgs[i] = fe.Error()
	}
	return ErrInvalidRules.Error() + ": " + strings.Join(msgs, "; ")
}

func (e *CompileError) Unwrap() error { return ErrInvalidRules }

// FieldErrors are e's errors, which a server answers as the causes of
// its 422 (kapi's registry does for a CRD's create or update).
func (e *CompileError) FieldErrors() []schema.FieldError { return e.Errors }

var _ schema.Compiler = Compile

// Compile compiles every x-kubernetes-validations rule of root, a
// whole-object schema, as kube-apiserver does when a CRD is created: it
// fails, naming the rule's path and kube's message, on rules and
// messageExpressions that do not compile, on fieldPaths that do not
// resolve and on rules whose estimated cost exceeds kube's per-rule or
// per-schema limits. A schema without rules gives Rules that accept
// everything.
//
// Since kube needs a structural schema to type the rules, Compile also
// fails when root is not structural in kube's sense. The root's metadata is
// typed as kube types it for custom resources (name and generateName).
func Compile(root *schema.Schema) (schema.Rules, error) {
	if len(root.RulePaths()) == 0 {
		return noRules{}, nil
	}
	props, err := internalSchema(root)
	if err != nil {
		return nil, err
	}
	ss, err := structuralschema.NewStructural(props)
	if err != nil {
		return nil, &CompileError{Errors: []schema.FieldError{{Type: string(field.ErrorTypeInvalid), Field: "openAPIV3Schema", Value: "", Detail: err.Error()}}}
	}
	if errs := structuralschema.ValidateStructural(field.NewPath("openAPIV3Schema"), ss); len(errs) > 0 {
		return nil, &CompileError{Errors: fieldErrors(errs)}
	}
	if errs := celErrors(crdvalidation.ValidateCustomResourceDefinition(context.Background(), crdFor(props))); len(errs) > 0 {
		return nil, &CompileError{Errors: errs}
	}
	v := kubecel.NewValidator(ss, true, celconfig.PerCallLimit)
	if v == nil {
		return noRules{}, nil
	}
	return &rules{schema: ss, validator: v}, nil
}

// noRules is the Rules of a schema without x-kubernetes-validations.
type noRules struct{}

func (noRules) Validate(context.Context, map[string]any, map[string]any) []schema.FieldError {
	return nil
}

// rules evaluates compiled rules. Like kube's CRD strategy, one value
// serves every request concurrently: kube's Validator is read-only once
// built.
type rules struct {
	schema    *structuralschema.Structural
	validator *kubecel.Validator
}

// Validate evaluates the rules on obj (and old, on update) as kube's
// custom-resource strategy does: the whole-object budget
// RuntimeCELCostBudget, the per-call limit PerCallLimit, transition rules
// only when old has a value at the rule's node (or with optionalOldSelf),
// and on update kube's default ratcheting (a failing rule that does not
// read oldSelf is not reported on a value equal to its old value).
// Numbers may be json.Number, int, int64 or float64; obj and old are not
// modified.
func (r *rules) Validate(ctx context.Context, obj, old map[string]any) []schema.FieldError {
	newObj, _ := normalize(obj)
	if old == nil {
		errs, _ := r.validator.Validate(ctx, nil, r.schema, newObj, nil, celconfig.RuntimeCELCostBudget)
		return fieldErrors(errs)
	}
	oldObj, _ := normalize(old)
	correlated := common.NewCorrelatedObject(newObj, oldObj, &model.Structural{Structural: r.schema})
	errs, _ := r.validator.Validate(ctx, nil, r.schema, newObj, oldObj, celconfig.RuntimeCELCostBudget, kubecel.WithRatcheting(correlated))
	return fieldErrors(errs)
}

// internalSchema converts root to apiextensions' internal JSONSchemaProps
// through its OpenAPI v3 JSON form and the v1 type, the way a CRD manifest
// reaches kube's validation.
func internalSchema(root *schema.Schema) (*apiextensions.JSONSchemaProps, error) {
	m := root.JSON()
	if p, ok := m["properties"].(map[string]any); ok {
		if md, ok := p["metadata"].(map[string]any); ok {
			p["metadata"] = rootMetadata(md)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("cel: encode schema: %w", err)
	}
	var v1 apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal(b, &v1); err != nil {
		return nil, fmt.Errorf("cel: decode schema as JSONSchemaProps: %w", err)
	}
	var out apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&v1, &out, nil); err != nil {
		return nil, fmt.Errorf("cel: convert schema: %w", err)
	}
	return &out, nil
}

// rootMetadata is what kube allows of a custom resource's metadata schema:
// type object and the name and generateName properties. kapi's built-in
// and Go-struct schemas describe all of ObjectMeta; kube's CEL sees only
// these two fields of it anyway.
func rootMetadata(md map[string]any) map[string]any {
	out := map[string]any{"type": "object"}
	props, _ := md["properties"].(map[string]any)
	kept := map[string]any{}
	for _, k := range []string{"name", "generateName"} {
		if p, ok := props[k]; ok {
			kept[k] = p
		}
	}
	if len(kept) > 0 {
		out["properties"] = kept
	}
	return out
}

// crdFor wraps props in a CustomResourceDefinition kube's CRD validation
// accepts, so that its rule checks run on props.
func crdFor(props *apiextensions.JSONSchemaProps) *apiextensions.CustomResourceDefinition {
	return &apiextensions.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "rules.cel.kapi.dev"},
		Spec: apiextensions.CustomResourceDefinitionSpec{
			Group: "cel.kapi.dev",
			Names: apiextensions.CustomResourceDefinitionNames{
				Plural: "rules", Singular: "rule", Kind: "Rule", ListKind: "RuleList",
			},
			Scope:                 apiextensions.NamespaceScoped,
			Versions:              []apiextensions.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true}},
			Validation:            &apiextensions.CustomResourceValidation{OpenAPIV3Schema: props},
			PreserveUnknownFields: new(false),
			Conversion:            &apiextensions.CustomResourceConversion{Strategy: apiextensions.NoneConverter},
		},
		Status: apiextensions.CustomResourceDefinitionStatus{StoredVersions: []string{"v1"}},
	}
}

// crdSchemaPath is where kube's CRD validation reports schema errors of
// crdFor's CRD.
const crdSchemaPath = "spec.validation."

// celErrors keeps the errors of kube's CRD validation about rules: those
// at or under an x-kubernetes-validations entry and the schema-wide cost
// limit. Others concern the wrapper CRD or schema checks kapi's core makes
// itself.
func celErrors(errs field.ErrorList) []schema.FieldError {
	var out field.ErrorList
	for _, e := range errs {
		if !strings.HasPrefix(e.Field, crdSchemaPath) {
			continue
		}
		if strings.Contains(e.Field, "x-kubernetes-validations") || strings.Contains(e.Detail, "x-kubernetes-validations") {
			e.Field = strings.TrimPrefix(e.Field, crdSchemaPath)
			out = append(out, e)
		}
	}
	return fieldErrors(out)
}

// fieldErrors converts kube's field errors. kube omits the value of a
// failed rule on an object or array from its message (field.OmitValueType);
// FieldError cannot say "omitted", so such errors carry a nil Value.
func fieldErrors(errs field.ErrorList) []schema.FieldError {
	if len(errs) == 0 {
		return nil
	}
	out := make([]schema.FieldError, len(errs))
	for i, e := range errs {
		out[i] = schema.FieldError{Type: string(e.Type), Field: e.Field, Value: e.BadValue, Detail: e.Detail}
		if _, omit := e.BadValue.(field.OmitValueType); omit {
			out[i].Value = schema.OmitValue
		}
	}
	return out
}
