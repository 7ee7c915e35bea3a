package cel

import (
	"context"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/kapi-dev/kapi/registry/admission/webhook"
	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/request"
)

// CompileMatchConditions compiles a webhook's matchConditions with
// kube-apiserver's own CEL environment and matcher
// (k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions): the
// variables object, oldObject and request; an expression that does not
// compile is a *webhook.ConditionError with kube's message. Give it to
// the registry as Options.WebhookConditions. The authorizer variable
// (authorizer.group(…).resource(…).check(verb), authorizer.requestResource)
// asks the registry's authorizer (ConditionInput.Authorizer) as the
// request's user, as kube's asks its own; without one, an expression
// that calls it fails, by the webhook's failurePolicy.
func CompileMatchConditions(conds []webhook.MatchCondition, failurePolicy string) (webhook.Condition, error) {
	strict := plugincel.NewCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	vars := plugincel.OptionalVariableDeclarations{HasParams: false, HasAuthorizer: true}
	accessors := make([]plugincel.ExpressionAccessor, len(conds))
	for i, c := range conds {
		expr := strings.TrimSpace(c.Expression)
		mc := &matchconditions.MatchCondition{Name: c.Name, Expression: expr}
		if res := strict.CompileCELExpression(mc, vars, environment.NewExpressions); res.Error != nil {
			return nil, &webhook.ConditionError{Index: i, Expression: expr, Detail: res.Error.Detail}
		}
		accessors[i] = mc
	}
	compiler := plugincel.NewConditionCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	policy := admissionregistrationv1.FailurePolicyType(failurePolicy)
	m := matchconditions.NewMatcher(compiler.CompileCondition(accessors, vars, environment.StoredExpressions), &policy, "webhook", "admit", "")
	return &conditions{m}, nil
}

type conditions struct{ m matchconditions.Matcher }

// Match evaluates the conditions on in, as kube's webhook dispatcher
// does.
func (c *conditions) Match(ctx context.Context, in webhook.ConditionInput) (bool, error) {
	a := in.Attributes
	gvk := schema.GroupVersionKind{Group: in.Group, Version: in.Version, Kind: in.Kind}
	obj, old := object(a.Object), object(a.OldObject)
	var opts runtime.Object
	if a.Options != nil {
		opts = &unstructured.Unstructured{Object: a.Options}
	}
	var u user.Info = &user.DefaultInfo{}
	if a.User != nil {
		u = &user.DefaultInfo{Name: a.User.Name, UID: a.User.UID, Groups: a.User.Groups, Extra: a.User.Extra}
	}
	rv := in.ResourceVersion
	if rv == "" {
		rv = in.Version
	}
	attrs := admission.NewAttributesRecord(obj, old, gvk, a.Namespace, a.Name,
		schema.GroupVersionResource{Group: a.Group, Version: rv, Resource: a.Resource}, a.Subresource,
		admission.Operation(a.Operation), opts, a.DryRun, u)
	va := &admission.VersionedAttributes{Attributes: attrs, VersionedKind: gvk, VersionedObject: admission.NewLazyObject(obj), VersionedOldObject: admission.NewLazyObject(old)}
	var az authorizer.Authorizer
	if in.Authorizer != nil {
		az = authorizer.AuthorizerFunc(kapiAuthorizer{in.Authorizer}.Authorize)
	}
	res := c.m.Match(ctx, va, nil, az)
	if res.Error != nil {
		return false, res.Error
	}
	return res.Matches, nil
}

// kapiAuthorizer is kapi's authorizer as kube's CEL authorizer library
// calls one.
type kapiAuthorizer struct{ a authz.Authorizer }

func (k kapiAuthorizer) Authorize(ctx context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	var u *request.User
	if ui := attrs.GetUser(); ui != nil {
		u = &request.User{Name: ui.GetName(), UID: ui.GetUID(), Groups: ui.GetGroups(), Extra: ui.GetExtra()}
	}
	d, reason, err := k.a.Authorize(ctx, authz.Attributes{
		User: u, ResourceRequest: attrs.IsResourceRequest(), Path: attrs.GetPath(), Verb: attrs.GetVerb(),
		APIGroup: attrs.GetAPIGroup(), APIVersion: attrs.GetAPIVersion(), Resource: attrs.GetResource(),
		Subresource: attrs.GetSubresource(), Namespace: attrs.GetNamespace(), Name: attrs.GetName(),
	})
	switch d {
	case authz.Allow:
		return authorizer.DecisionAllow, reason, err
	case authz.Deny:
		return authorizer.DecisionDeny, reason, err
	}
	return authorizer.DecisionNoOpinion, reason, err
}

// object is obj as a runtime.Object, or a nil interface without one.
func object(obj map[string]any) runtime.Object {
	if obj == nil {
		return nil
	}
	return &unstructured.Unstructured{Object: normalizeAll(obj)}
}

// normalizeAll is obj with its numbers as unstructured needs them.
func normalizeAll(obj map[string]any) map[string]any {
	v, _ := normalize(obj)
	m, _ := v.(map[string]any)
	return m
}

var _ webhook.ConditionCompiler = CompileMatchConditions
