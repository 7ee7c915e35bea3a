package registry

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"sort"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/kapi-dev/kapi/codec/protobuf"
	"github.com/kapi-dev/kapi/registry/authn"
	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/request"
	"github.com/kapi-dev/kapi/schema"
)

// The review resources (EXT-8, EXT-11): questions to the server that are
// answered, not stored. SelfSubjectAccessReview and SelfSubjectRulesReview
// make kubectl auth can-i [--list] work, SelfSubjectReview kubectl auth
// whoami; SubjectAccessReview, LocalSubjectAccessReview and TokenReview
// let webhooks and aggregated API servers delegate authorization and
// authentication to kapi.

// verbs are what discovery lists for res.
func (res *Resource) verbs() []string {
	if res.Review != nil {
		return []string{"create"}
	}
	if res.Custom {
		return crdVerbs
	}
	if res.Strategy.NoDeleteCollection {
		return verbsWithoutDeleteCollection
	}
	return nil // every verb of a stored resource
}

// verbsWithoutDeleteCollection are a stored built-in kind's verbs without
// deletecollection (namespaces').
var verbsWithoutDeleteCollection = []string{"create", "delete", "get", "list", "patch", "update", "watch"}

// crdVerbs are a custom resource's verbs in the order kube's discovery
// lists them (apiextensions-apiserver's discovery controller).
var crdVerbs = []string{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}

// serveReview answers a POST to a review resource with the review's
// result (201, as kube).
func (r *Registry) serveReview(w http.ResponseWriter, rq *routed) error {
	t, o, obj, err := r.readCreate(rq)
	if err != nil {
		return err
	}
	if err := checkTypeMeta(rq.res, obj); err != nil {
		return err
	}
	if err := checkMetadata(rq.res, obj); err != nil {
		return err
	}
	if err := checkNamespace(rq.res, obj, rq.namespace); err != nil {
		return err
	}
	// As kube: the create handler's field manager records the request's
	// fields in the review it answers with (operation Update, as for any
	// create); a review that answers with an object of its own
	// (SelfSubjectReview) drops them. kube compares with the empty object
	// of the review's Go type, whose spec (a struct, not a pointer) is
	// there already: the request does not own spec itself, only what is
	// in it.
	if obj, err = r.track(rq.Context(), rq.res, Object{"spec": map[string]any{}}, obj, o.manager, ""); err != nil {
		return err
	}
	out, err := rq.res.Review(rq.Context(), obj)
	if err != nil {
		return err
	}
	tm := protobuf.TypeMeta{APIVersion: rq.res.GroupVersion(), Kind: rq.res.Kind}
	b, err := encodeValue(t.Format, tm, rq.res.Protobuf, map[string]any(out))
	if err != nil {
		return errInternal(err)
	}
	writeBody(w, rq.Request, http.StatusCreated, t.Format, b)
	return nil
}

// reviewResources are the review resources of r.
func (r *Registry) reviewResources() []*Resource {
	type review = func(context.Context, Object) (Object, error)
	res := func(group, kind, plural string, namespaced bool, md protoreflect.MessageDescriptor, s *schema.Schema, f review) *Resource {
		return &Resource{Group: group, Version: "v1", Kind: kind, Plural: plural, Namespaced: namespaced, Protobuf: md, Schema: s, Review: f}
	}
	const authorization, authentication = "authorization.k8s.io", "authentication.k8s.io"
	return []*Resource{
		res(authorization, "SelfSubjectAccessReview", "selfsubjectaccessreviews", false, protobuf.SelfSubjectAccessReview, sharedSchemas.selfSubjectAccessReview(), r.selfSubjectAccessReview),
		res(authorization, "SelfSubjectRulesReview", "selfsubjectrulesreviews", false, protobuf.SelfSubjectRulesReview, sharedSchemas.selfSubjectRulesReview(), r.selfSubjectRulesReview),
		res(authorization, "SubjectAccessReview", "subjectaccessreviews", false, protobuf.SubjectAccessReview, sharedSchemas.subjectAccessReview(), r.subjectAccessReview),
		res(authorization, "LocalSubjectAccessReview", "localsubjectaccessreviews", true, protobuf.LocalSubjectAccessReview, sharedSchemas.localSubjectAccessReview(), r.localSubjectAccessReview),
		res(authentication, "SelfSubjectReview", "selfsubjectreviews", false, protobuf.SelfSubjectReview, sharedSchemas.selfSubjectReview(), r.selfSubjectReview),
		res(authentication, "TokenReview", "tokenreviews", false, protobuf.TokenReview, sharedSchemas.tokenReview(), r.tokenReview),
	}
}

// requestUser is who sends the request in ctx.
func requestUser(ctx context.Context) *request.User {
	if u, ok := request.UserFrom(ctx); ok {
		return u
	}
	return anonymousUser()
}

func (r *Registry) selfSubjectAccessReview(ctx context.Context, obj Object) (Object, error) {
	if err := validateAccessReview(obj, false); err != nil {
		return nil, err
	}
	return r.accessReview(ctx, obj, requestUser(ctx), "")
}

func (r *Registry) localSubjectAccessReview(ctx context.Context, obj Object) (Object, error) {
	if err := validateAccessReview(obj, true); err != nil {
		return nil, err
	}
	return r.accessReview(ctx, obj, specUser(obj), obj.Namespace())
}

func (r *Registry) subjectAccessReview(ctx context.Context, obj Object) (Object, error) {
	if err := validateAccessReview(obj, true); err != nil {
		return nil, err
	}
	return r.accessReview(ctx, obj, specUser(obj), "")
}

// validateAccessReview is kube's validation of an access review's spec
// (ValidateSubjectAccessReviewSpec; withUser for the reviews that name a
// user): exactly one of resourceAttributes and nonResourceAttributes, and
// a user or a group. Kube's 422 names the internal object's kind, which is
// empty: ".authorization.k8s.io", and the values as Go prints them.
//
// Example: {"spec":{}} of a SubjectAccessReview is `.authorization.k8s.io ""
// is invalid: [spec: Invalid value: null: exactly one of ..., spec.user:
// Invalid value: "": at least one of user or group must be specified]`.
func validateAccessReview(obj Object, withUser bool) error {
	spec, _ := obj["spec"].(map[string]any)
	_, isResource := spec["resourceAttributes"].(map[string]any)
	nra, isNonResource := spec["nonResourceAttributes"].(map[string]any)
	var causes []StatusCause
	const union = ": exactly one of nonResourceAttributes or resourceAttributes must be specified"
	switch {
	case isResource && isNonResource:
		// The internal NonResourceAttributes, whose fields have no JSON names.
		v, _ := json.Marshal(struct{ Path, Verb string }{str(nra["path"]), str(nra["verb"])})
		causes = append(causes, StatusCause{Type: "FieldValueInvalid", Field: "spec", Message: "Invalid value: " + string(v) + union})
	case !isResource && !isNonResource:
		causes = append(causes, StatusCause{Type: "FieldValueInvalid", Field: "spec", Message: "Invalid value: null" + union})
	}
	if withUser && str(spec["user"]) == "" && len(stringList(spec["groups"])) == 0 {
		causes = append(causes, StatusCause{Type: "FieldValueInvalid", Field: "spec.user", Message: `Invalid value: "": at least one of user or group must be specified`})
	}
	return errInvalidCauses(`.authorization.k8s.io ""`, &StatusDetails{Group: "authorization.k8s.io", Causes: causes})
}

// specUser is the user a SubjectAccessReview asks about.
func specUser(obj Object) *request.User {
	spec, _ := obj["spec"].(map[string]any)
	u := &request.User{Name: str(spec["user"]), UID: str(spec["uid"]), Groups: stringList(spec["groups"])}
	if extra, ok := spec["extra"].(map[string]any); ok {
		u.Extra = map[string][]string{}
		for k, v := range extra {
			u.Extra[k] = stringList(v)
		}
	}
	return u
}

// accessReview answers whether u may do what obj's spec asks, in
// namespace ns when it is a LocalSubjectAccessReview.
func (r *Registry) accessReview(ctx context.Context, obj Object, u *request.User, ns string) (Object, error) {
	spec, _ := obj["spec"].(map[string]any)
	ra, isResource := spec["resourceAttributes"].(map[string]any)
	nra, _ := spec["nonResourceAttributes"].(map[string]any)
	a := authz.Attributes{User: u}
	if isResource {
		a.ResourceRequest = true
		a.Verb, a.APIGroup, a.APIVersion = str(ra["verb"]), str(ra["group"]), str(ra["version"])
		a.Resource, a.Subresource = str(ra["resource"]), str(ra["subresource"])
		a.Namespace, a.Name = str(ra["namespace"]), str(ra["name"])
		if ns != "" && a.Namespace != ns {
			return nil, errBadRequest("spec.resourceAttributes.namespace must match namespace: %s", ns)
		}
	} else {
		a.Verb, a.Path = str(nra["verb"]), str(nra["path"])
	}
	d, reason, err := r.authorizer.Authorize(ctx, a)
	status := map[string]any{"allowed": d == authz.Allow}
	if d == authz.Deny {
		status["denied"] = true
	}
	if reason != "" {
		status["reason"] = reason
	}
	if err != nil {
		status["evaluationError"] = err.Error()
	}
	obj["status"] = status
	return obj, nil
}

func (r *Registry) selfSubjectRulesReview(ctx context.Context, obj Object) (Object, error) {
	spec, _ := obj["spec"].(map[string]any)
	ns := str(spec["namespace"])
	rules := authz.Rules{Incomplete: true}
	if rr, ok := r.authorizer.(authz.RuleResolver); ok {
		rules = rr.RulesFor(ctx, requestUser(ctx), ns)
	}
	resource := make([]any, 0, len(rules.Resource))
	for _, rule := range rules.Resource {
		m := map[string]any{"verbs": anyStrings(rule.Verbs)}
		setStrings(m, "apiGroups", rule.APIGroups)
		setStrings(m, "resources", rule.Resources)
		setStrings(m, "resourceNames", rule.ResourceNames)
		resource = append(resource, m)
	}
	nonResource := make([]any, 0, len(rules.NonResource))
	for _, rule := range rules.NonResource {
		m := map[string]any{"verbs": anyStrings(rule.Verbs)}
		setStrings(m, "nonResourceURLs", rule.NonResourceURLs)
		nonResource = append(nonResource, m)
	}
	status := map[string]any{"resourceRules": resource, "nonResourceRules": nonResource, "incomplete": rules.Incomplete}
	if rules.Err != "" {
		status["evaluationError"] = rules.Err
	}
	// As kube: a review of its own, with the status only (an empty spec,
	// no metadata).
	return Object{"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": map[string]any{}, "spec": map[string]any{}, "status": status}, nil
}

// selfSubjectReview answers, as kube's, with a review of its own: the
// request's metadata left out, created now.
func (r *Registry) selfSubjectReview(ctx context.Context, obj Object) (Object, error) {
	return Object{
		"apiVersion": obj["apiVersion"], "kind": obj["kind"],
		"metadata": map[string]any{"creationTimestamp": r.timestamp()},
		"status":   map[string]any{"userInfo": userInfo(requestUser(ctx))},
	}, nil
}

// invalidBearerToken is kube's TokenReview error for a token that does
// not authenticate.
const invalidBearerToken = "invalid bearer token"

// tokenReview authenticates spec.token as a request bearing it would be,
// as kube's TokenReview does.
func (r *Registry) tokenReview(ctx context.Context, obj Object) (Object, error) {
	spec, _ := obj["spec"].(map[string]any)
	token := str(spec["token"])
	if token == "" {
		return nil, errBadRequest("token is required for TokenReview in authentication")
	}
	status := map[string]any{"user": map[string]any{}}
	if r.opts.Authenticator != nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		u, ok, err := r.opts.Authenticator.Authenticate(req)
		switch {
		case errors.Is(err, authn.ErrInvalidBearerToken):
			status["error"] = invalidBearerToken
		case err != nil:
			status["error"] = err.Error()
		case ok && u != nil && u.Name != request.Anonymous:
			// kube: a token that names no audience of its own (as the
			// token file's) is good for the API server's audiences
			// (Options.APIAudiences): a review reports those it asked
			// for, or all of them, and fails when it asked for others
			// alone.
			auds := r.opts.APIAudiences
			if asked := stringList(spec["audiences"]); len(asked) > 0 {
				auds = slices.DeleteFunc(slices.Clone(asked), func(a string) bool { return !slices.Contains(r.opts.APIAudiences, a) })
				if len(auds) == 0 {
					status["error"] = invalidBearerToken
					break
				}
			}
			status["authenticated"] = true
			status["user"] = userInfo(u)
			setStrings(status, "audiences", auds)
		}
	}
	obj["status"] = status
	return obj, nil
}

// userInfo is authentication/v1 UserInfo.
func userInfo(u *request.User) map[string]any {
	m := map[string]any{"username": u.Name}
	if u.UID != "" {
		m["uid"] = u.UID
	}
	setStrings(m, "groups", u.Groups)
	if len(u.Extra) > 0 {
		keys := make([]string, 0, len(u.Extra))
		for k := range u.Extra {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		extra := map[string]any{}
		for _, k := range keys {
			extra[k] = anyStrings(u.Extra[k])
		}
		m["extra"] = extra
	}
	return m
}

func anyStrings(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func setStrings(m map[string]any, key string, s []string) {
	if len(s) > 0 {
		m[key] = anyStrings(s)
	}
}

// str is v when it is a string, "" otherwise.
func str(v any) string {
	s, _ := v.(string)
	return s
}
