package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"github.com/kapi-dev/kapi/codec/protobuf"
	"github.com/kapi-dev/kapi/internal/validation"
	"github.com/kapi-dev/kapi/registry/authz/rbac"
	"github.com/kapi-dev/kapi/registry/internal/table"
	"github.com/kapi-dev/kapi/registry/request"
	"github.com/kapi-dev/kapi/schema"
)

// RBAC (EXT-10): rbac.authorization.k8s.io/v1 Roles, ClusterRoles,
// RoleBindings and ClusterRoleBindings are served as any resource. With
// Options.RBAC set, the registry also
//   - feeds that authorizer every stored role and binding as it changes
//     (a watch per resource, rbacFeed), and a write of one returns only
//     once the authorizer has seen it, so the next request is decided by
//     it (read your own writes, as a single kube-apiserver almost gives);
//   - refuses a role or binding that grants what its author does not
//     hold (kube's escalate and bind checks, in the kinds' strategies);
//   - keeps aggregated ClusterRoles' rules (kube's aggregation
//     controller) and creates kube's default roles and bindings.

// validateRules is kube's validation of a role's rules
// (ValidatePolicyRule): verbs required; a rule of non-resource URLs names
// no resources and is not in a namespaced role; a resource rule names
// groups and resources.
func validateRules(obj Object, namespaced bool) []FieldError {
	rules, _ := obj["rules"].([]any)
	var errs []FieldError
	for i, r := range rules {
		rule, _ := r.(map[string]any)
		path := fmt.Sprintf("rules[%d].", i)
		list := func(k string) []any { l, _ := rule[k].([]any); return l }
		if len(list("verbs")) == 0 {
			errs = append(errs, FieldError{Type: validation.TypeRequired, Field: path + "verbs"})
		}
		if urls := list("nonResourceURLs"); len(urls) > 0 {
			if namespaced {
				errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: path + "nonResourceURLs", Value: urls, Detail: "namespaced rules cannot apply to non-resource URLs"})
			}
			if len(list("apiGroups")) > 0 || len(list("resources")) > 0 || len(list("resourceNames")) > 0 {
				errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: path + "nonResourceURLs", Value: urls, Detail: "rules cannot apply to both regular resources and non-resource URLs"})
			}
			continue
		}
		if len(list("apiGroups")) == 0 {
			errs = append(errs, FieldError{Type: validation.TypeRequired, Field: path + "apiGroups", Detail: "resource rules must supply at least one api group"})
		}
		if len(list("resources")) == 0 {
			errs = append(errs, FieldError{Type: validation.TypeRequired, Field: path + "resources", Detail: "resource rules must supply at least one resource"})
		}
	}
	return errs
}

// nullRules writes a role's rules as kube answers them: Go's JSON of its
// Rules, which has no omitempty, and which storage gives back nil when
// empty. So no rules or an empty list read as null:
//
//	{"rules": []}  →  {"rules": null}
//
// (the field manager, which runs before, owns rules for the empty list,
// as kube's does.)
func nullRules(obj Object) {
	if l, _ := obj["rules"].([]any); len(l) == 0 {
		obj["rules"] = nil
	}
}

// defaultBinding is kube's defaulting of a binding: the roleRef's
// apiGroup and a User's or Group's is the RBAC group.
func defaultBinding(obj Object) {
	ref, ok := obj["roleRef"].(map[string]any)
	if !ok && obj["roleRef"] == nil { // kube's roleRef is a struct: always there
		ref = map[string]any{}
		obj["roleRef"] = ref
	}
	if ref != nil && str(ref["apiGroup"]) == "" {
		ref["apiGroup"] = rbacGroup
	}
	subjects, _ := obj["subjects"].([]any)
	for _, s := range subjects {
		if sub, ok := s.(map[string]any); ok && str(sub["apiGroup"]) == "" {
			if k := str(sub["kind"]); k == "User" || k == "Group" {
				sub["apiGroup"] = rbacGroup
			}
		}
	}
}

// validateBinding is kube's validation of a binding (ValidateRoleBinding):
// its roleRef names a Role or ClusterRole of the RBAC group, and each
// subject a User or Group of the RBAC group, or a ServiceAccount.
func validateBinding(obj Object, namespaced bool) []FieldError {
	var errs []FieldError
	ref, _ := obj["roleRef"].(map[string]any)
	if g := str(ref["apiGroup"]); g != rbacGroup {
		errs = append(errs, FieldError{Type: validation.TypeNotSupported, Field: "roleRef.apiGroup", Value: g, Detail: `supported values: "` + rbacGroup + `"`})
	}
	if k := str(ref["kind"]); k != "Role" && k != "ClusterRole" {
		errs = append(errs, FieldError{Type: validation.TypeNotSupported, Field: "roleRef.kind", Value: k, Detail: `supported values: "Role", "ClusterRole"`})
	}
	if str(ref["name"]) == "" {
		errs = append(errs, FieldError{Type: validation.TypeRequired, Field: "roleRef.name"})
	}
	subjects, _ := obj["subjects"].([]any)
	for i, s := range subjects {
		sub, _ := s.(map[string]any)
		path := fmt.Sprintf("subjects[%d].", i)
		if str(sub["name"]) == "" {
			errs = append(errs, FieldError{Type: validation.TypeRequired, Field: path + "name"})
		}
		group := str(sub["apiGroup"])
		switch str(sub["kind"]) {
		case "ServiceAccount":
			if group != "" {
				errs = append(errs, FieldError{Type: validation.TypeNotSupported, Field: path + "apiGroup", Value: group, Detail: `supported values: ""`})
			}
			if !namespaced && str(sub["namespace"]) == "" {
				errs = append(errs, FieldError{Type: validation.TypeRequired, Field: path + "namespace"})
			}
		case "User", "Group":
			if group != rbacGroup {
				errs = append(errs, FieldError{Type: validation.TypeNotSupported, Field: path + "apiGroup", Value: group, Detail: `supported values: "` + rbacGroup + `"`})
			}
		default:
			errs = append(errs, FieldError{Type: validation.TypeNotSupported, Field: path + "kind", Value: str(sub["kind"]), Detail: `supported values: "ServiceAccount", "User", "Group"`})
		}
	}
	return errs
}

// bindingColumns are kube's printer columns of a RoleBinding or
// ClusterRoleBinding: ROLE (kind/name) and AGE, and with -o wide the
// subjects by kind (SubjectsStrings).
func bindingColumns(kind string) []Column {
	roleRef := "roleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error."
	if kind == "ClusterRoleBinding" {
		roleRef = "roleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error."
	}
	subjects := func(obj Object, want string) any {
		var out []string
		l, _ := obj["subjects"].([]any)
		for _, e := range l {
			s, _ := e.(map[string]any)
			if str(s["kind"]) != want {
				continue
			}
			if want == "ServiceAccount" {
				out = append(out, str(s["namespace"])+"/"+str(s["name"]))
			} else {
				out = append(out, str(s["name"]))
			}
		}
		return strings.Join(out, ", ")
	}
	lower := strings.ToLower(kind[:1]) + kind[1:]
	return []Column{
		{Name: "Role", Type: "string", Description: roleRef, Value: func(obj Object) any {
			ref, _ := obj["roleRef"].(map[string]any)
			return str(ref["kind"]) + "/" + str(ref["name"])
		}},
		{Name: "Age", Type: "date", DeclaredType: "string", JSONPath: ".metadata.creationTimestamp", Description: table.Created.Description},
		{Name: "Users", Type: "string", Priority: 1, Description: "Users in the " + lower, Value: func(obj Object) any { return subjects(obj, "User") }},
		{Name: "Groups", Type: "string", Priority: 1, Description: "Groups in the " + lower, Value: func(obj Object) any { return subjects(obj, "Group") }},
		{Name: "ServiceAccounts", Type: "string", Priority: 1, Description: "ServiceAccounts in the " + lower, Value: func(obj Object) any { return subjects(obj, "ServiceAccount") }},
	}
}

// rbacGroup is the group of the RBAC kinds.
const rbacGroup = "rbac.authorization.k8s.io"

// rbacResources are the four RBAC kinds, with kube's checks when r
// enforces RBAC.
func (r *Registry) rbacResources() []*Resource {
	role := func(kind, plural string, namespaced bool, s *schema.Schema) *Resource {
		res := &Resource{Group: rbacGroup, Version: "v1", Kind: kind, Plural: plural, Namespaced: namespaced, Schema: s}
		res.Strategy = Strategy{
			ValidateName: pathSegmentName,
			PrepareForCreate: func(ctx context.Context, obj Object) error {
				nullRules(obj)
				return r.checkRoleWrite(ctx, res, obj, nil)
			},
			PrepareForUpdate: func(ctx context.Context, obj, old Object) error {
				nullRules(obj)
				return r.checkRoleWrite(ctx, res, obj, old)
			},
			ValidateCreate: func(_ context.Context, obj Object) []FieldError { return validateRules(obj, namespaced) },
			ValidateUpdate: func(_ context.Context, obj, _ Object) []FieldError { return validateRules(obj, namespaced) },
		}
		return res
	}
	binding := func(kind, plural string, namespaced bool, s *schema.Schema) *Resource {
		res := &Resource{Group: rbacGroup, Version: "v1", Kind: kind, Plural: plural, Namespaced: namespaced, Schema: s,
			Columns: bindingColumns(kind)}
		res.Strategy = Strategy{
			ValidateName:     pathSegmentName,
			PrepareForCreate: func(ctx context.Context, obj Object) error { return r.checkBindingWrite(ctx, res, obj, nil) },
			PrepareForUpdate: func(ctx context.Context, obj, old Object) error { return r.checkBindingWrite(ctx, res, obj, old) },
			Default:          func(_ context.Context, obj Object) error { defaultBinding(obj); return nil },
			ValidateCreate:   func(_ context.Context, obj Object) []FieldError { return validateBinding(obj, namespaced) },
			ValidateUpdate: func(_ context.Context, obj, old Object) []FieldError {
				errs := validateBinding(obj, namespaced)
				if !reflect.DeepEqual(obj["roleRef"], old["roleRef"]) {
					// kube's ValidateImmutableField prints the internal
					// RoleRef, whose fields have no JSON names.
					ref, _ := obj["roleRef"].(map[string]any)
					v := struct{ APIGroup, Kind, Name string }{str(ref["apiGroup"]), str(ref["kind"]), str(ref["name"])}
					errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: "roleRef", Value: v, Detail: "field is immutable"})
				}
				return errs
			},
		}
		return res
	}
	out := []*Resource{
		role("Role", "roles", true, sharedSchemas.role()),
		role("ClusterRole", "clusterroles", false, sharedSchemas.clusterRole()),
		binding("RoleBinding", "rolebindings", true, sharedSchemas.roleBinding()),
		binding("ClusterRoleBinding", "clusterrolebindings", false, sharedSchemas.clusterRoleBinding()),
	}
	if r.opts.RBAC != nil { // a write returns once the authorizer has it
		for _, res := range out {
			res.Strategy.AfterWrite, res.Strategy.AfterDelete = r.rbacSeen(res), r.rbacGone(res)
		}
	}
	out[0].Protobuf, out[1].Protobuf = protobuf.Role, protobuf.ClusterRole
	out[2].Protobuf, out[3].Protobuf = protobuf.RoleBinding, protobuf.ClusterRoleBinding
	return out
}

// requestUser and the request's Info, for the write checks; kapi's own
// writes (no Info: the aggregation controller's, the defaults') are not
// checked.
func writeAuthor(ctx context.Context) (*request.User, *request.Info, bool) {
	info, ok := request.InfoFrom(ctx)
	u, uok := request.UserFrom(ctx)
	return u, info, ok && uok
}

// checkRoleWrite is kube's escalation check on a Role or ClusterRole
// write (rbac.CheckRoleWrite); an update that changes nothing the check
// reads (only finalizers or ownerReferences, as kube exempts) passes.
func (r *Registry) checkRoleWrite(ctx context.Context, res *Resource, obj, old Object) error {
	u, info, ok := writeAuthor(ctx)
	if r.opts.RBAC == nil || !ok || (old != nil && onlyGCFields(obj, old)) {
		return nil
	}
	var role struct {
		Rules           []rbac.PolicyRule     `json:"rules"`
		AggregationRule *rbac.AggregationRule `json:"aggregationRule"`
	}
	if err := convert(obj, &role); err != nil {
		return errBadRequest("%s: %v", res.Kind, err)
	}
	aggregation := role.AggregationRule != nil
	if old != nil {
		_, was := old["aggregationRule"]
		aggregation = aggregation || was
	}
	if err := r.opts.RBAC.CheckRoleWrite(ctx, r.authorizer, u, info, role.Rules, aggregation); err != nil {
		return rbacForbidden(res, obj.Name(), err)
	}
	return nil
}

// checkBindingWrite is kube's check on a RoleBinding or
// ClusterRoleBinding write (rbac.CheckBindingWrite).
func (r *Registry) checkBindingWrite(ctx context.Context, res *Resource, obj, old Object) error {
	u, _, ok := writeAuthor(ctx)
	if r.opts.RBAC == nil || !ok || (old != nil && onlyGCFields(obj, old)) {
		return nil
	}
	var b struct {
		RoleRef rbac.RoleRef `json:"roleRef"`
	}
	if err := convert(obj, &b); err != nil {
		return errBadRequest("%s: %v", res.Kind, err)
	}
	err := r.opts.RBAC.CheckBindingWrite(ctx, r.authorizer, u, obj.Namespace(), b.RoleRef)
	var nf *rbac.NotFoundError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &nf):
		return newStatus(http.StatusNotFound, "NotFound", err.Error(), &StatusDetails{Name: b.RoleRef.Name, Group: rbacGroup, Kind: strings.ToLower(b.RoleRef.Kind) + "s"})
	}
	return rbacForbidden(res, obj.Name(), err)
}

// rbacForbidden is kube's 403 for a refused role or binding write.
func rbacForbidden(res *Resource, name string, err error) *StatusError {
	return newStatus(http.StatusForbidden, "Forbidden", rbac.ForbiddenMessage(res.Plural, name, err),
		&StatusDetails{Name: name, Group: rbacGroup, Kind: res.Plural})
}

// onlyGCFields tells an update that changes only the fields the garbage
// collector writes (kube's IsOnlyMutatingGCFields).
func onlyGCFields(obj, old Object) bool {
	strip := func(o Object) Object {
		c := make(Object, len(o))
		for k, v := range o {
			c[k] = v
		}
		m := make(map[string]any, len(o.Meta()))
		for k, v := range o.Meta() {
			switch k {
			case "finalizers", "ownerReferences", "resourceVersion", "managedFields", "generation":
			default:
				m[k] = v
			}
		}
		c["metadata"] = m
		return c
	}
	return reflect.DeepEqual(strip(obj), strip(old))
}

// convert decodes in into out by its JSON form.
func convert(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// pathSegmentName is kube's name rule for the RBAC kinds
// (ValidateRBACName): any name that is a path segment, so
// "system:discovery" is one.
func pathSegmentName(_ context.Context, name string) []string {
	switch {
	case name == "." || name == "..":
		return []string{fmt.Sprintf("may not be '%s'", name)}
	case strings.Contains(name, "/"):
		return []string{"may not contain '/'"}
	case strings.Contains(name, "%"):
		return []string{"may not contain '%'"}
	}
	return nil
}
