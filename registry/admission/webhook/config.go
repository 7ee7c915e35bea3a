package webhook

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi/internal/validation"
	"github.com/kapi-dev/kapi/registry/authz/rbac"
)

// The kinds of webhook configurations (admissionregistration.k8s.io/v1).
const (
	MutatingKind   = "MutatingWebhookConfiguration"
	ValidatingKind = "ValidatingWebhookConfiguration"
)

// Configuration is a MutatingWebhookConfiguration or a
// ValidatingWebhookConfiguration, as far as calling its webhooks goes.
type Configuration struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Webhooks []Webhook `json:"webhooks"`
}

// Webhook is one webhook of a configuration (admissionregistration/v1
// MutatingWebhook or ValidatingWebhook; ReinvocationPolicy is the
// mutating one's only). Pointers are fields kube defaults; a stored
// configuration has them all.
type Webhook struct {
	Name                    string              `json:"name"`
	ClientConfig            ClientConfig        `json:"clientConfig"`
	Rules                   []Rule              `json:"rules,omitempty"`
	FailurePolicy           *string             `json:"failurePolicy,omitempty"`
	MatchPolicy             *string             `json:"matchPolicy,omitempty"`
	NamespaceSelector       *rbac.LabelSelector `json:"namespaceSelector,omitempty"`
	ObjectSelector          *rbac.LabelSelector `json:"objectSelector,omitempty"`
	SideEffects             *string             `json:"sideEffects"`
	TimeoutSeconds          *int32              `json:"timeoutSeconds,omitempty"`
	AdmissionReviewVersions []string            `json:"admissionReviewVersions"`
	ReinvocationPolicy      *string             `json:"reinvocationPolicy,omitempty"`
	MatchConditions         []MatchCondition    `json:"matchConditions,omitempty"`
}

// LabelSelector is a metav1.LabelSelector (namespaceSelector,
// objectSelector).
type LabelSelector = rbac.LabelSelector

// ClientConfig says how to reach a webhook: a URL, or a service
// reference the embedding program resolves (Options.ResolveService),
// and the CA bundle its serving certificate is checked against.
type ClientConfig struct {
	URL      *string           `json:"url,omitempty"`
	Service  *ServiceReference `json:"service,omitempty"`
	CABundle []byte            `json:"caBundle,omitempty"`
}

// ServiceReference names a Service that serves a webhook.
type ServiceReference struct {
	Namespace string  `json:"namespace"`
	Name      string  `json:"name"`
	Path      *string `json:"path,omitempty"`
	Port      *int32  `json:"port,omitempty"`
}

// Rule is a RuleWithOperations: the operations, API groups, versions and
// resources ("pods", "pods/status", "*/scale", "*") and scope
// ("Cluster", "Namespaced" or "*") a webhook is called for.
type Rule struct {
	Operations  []string `json:"operations,omitempty"`
	APIGroups   []string `json:"apiGroups,omitempty"`
	APIVersions []string `json:"apiVersions,omitempty"`
	Resources   []string `json:"resources,omitempty"`
	Scope       *string  `json:"scope,omitempty"`
}

// MatchCondition is a CEL expression that must hold for a webhook to be
// called (matchConditions).
type MatchCondition struct {
	Name       string `json:"name"`
	Expression string `json:"expression"`
}

// Policy values, by kube's names.
const (
	Fail       = "Fail"
	Ignore     = "Ignore"
	Exact      = "Exact"
	Equivalent = "Equivalent"
	Never      = "Never"
	IfNeeded   = "IfNeeded"
)

// ParseConfiguration decodes a stored configuration's JSON.
func ParseConfiguration(b []byte) (*Configuration, error) {
	var c Configuration
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("webhook: configuration: %w", err)
	}
	return &c, nil
}

// Validate checks a configuration as kube validates one on create
// (ValidateMutatingWebhookConfiguration, ValidateValidatingWebhookConfiguration),
// on its JSON form; old, on update, is the stored configuration, whose
// webhooks relax what kube relaxes for existing objects (side effects
// classes, unknown review versions, duplicate names). Metadata is the
// registry's to check. Match conditions are checked for their shape
// here; compiling them is the Dispatcher's (Options.Conditions).
func Validate(kind string, obj, old map[string]any) []validation.Error {
	c, err := fromMap(obj)
	if err != nil {
		return []validation.Error{{Type: validation.TypeInvalid, Field: "webhooks", Value: validation.OmitValue, Detail: err.Error()}}
	}
	opts := validateOptions{noSideEffects: true, knownVersions: true, uniqueNames: true, mutating: kind == MutatingKind}
	if old != nil {
		if o, err := fromMap(old); err == nil {
			opts.relax(o)
		}
	}
	var errs []validation.Error
	names := map[string]bool{}
	for i, h := range c.Webhooks {
		p := fmt.Sprintf("webhooks[%d]", i)
		errs = append(errs, validateWebhook(&h, opts, p)...)
		errs = append(errs, validateReviewVersions(h.AdmissionReviewVersions, opts.knownVersions, p+".admissionReviewVersions")...)
		if opts.uniqueNames && h.Name != "" {
			if names[h.Name] {
				errs = append(errs, validation.Error{Type: validation.TypeDuplicate, Field: p + ".name", Value: h.Name})
			}
			names[h.Name] = true
		}
	}
	return errs
}

func fromMap(obj map[string]any) (*Configuration, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return ParseConfiguration(b)
}

type validateOptions struct {
	noSideEffects, knownVersions, uniqueNames, mutating bool
}

// relax keeps what an existing configuration already has valid, as kube's
// Validate…Update does.
func (o *validateOptions) relax(old *Configuration) {
	names := map[string]bool{}
	for _, h := range old.Webhooks {
		if h.SideEffects == nil || !slices.Contains(noSideEffectClasses, *h.SideEffects) {
			o.noSideEffects = false
		}
		if len(h.AdmissionReviewVersions) > 0 && !slices.ContainsFunc(h.AdmissionReviewVersions, knownVersion) {
			o.knownVersions = false
		}
		if names[h.Name] {
			o.uniqueNames = false
		}
		names[h.Name] = true
	}
}

var (
	failurePolicies     = []string{Fail, Ignore}
	matchPolicies       = []string{Equivalent, Exact}
	sideEffectClasses   = []string{"None", "NoneOnDryRun", "Some", "Unknown"}
	noSideEffectClasses = []string{"None", "NoneOnDryRun"}
	operations          = []string{"*", "CONNECT", "CREATE", "DELETE", "UPDATE"}
	reinvocation        = []string{IfNeeded, Never}
	scopes              = []string{"*", "Cluster", "Namespaced"}
	reviewVersions      = []string{"v1", "v1beta1"}
)

func knownVersion(v string) bool { return slices.Contains(reviewVersions, v) }

func notSupported(field string, v string, supported []string) validation.Error {
	q := make([]string, len(supported))
	for i, s := range supported {
		q[i] = fmt.Sprintf("%q", s)
	}
	return validation.Error{Type: validation.TypeNotSupported, Field: field, Value: v, Detail: "supported values: " + strings.Join(q, ", ")}
}

func validateWebhook(h *Webhook, o validateOptions, p string) []validation.Error {
	var errs []validation.Error
	errs = append(errs, fullyQualifiedName(p+".name", h.Name)...)
	for i := range h.Rules {
		errs = append(errs, validateRule(&h.Rules[i], fmt.Sprintf("%s.rules[%d]", p, i))...)
	}
	if h.FailurePolicy != nil && !slices.Contains(failurePolicies, *h.FailurePolicy) {
		errs = append(errs, notSupported(p+".failurePolicy", *h.FailurePolicy, failurePolicies))
	}
	if h.MatchPolicy != nil && !slices.Contains(matchPolicies, *h.MatchPolicy) {
		errs = append(errs, notSupported(p+".matchPolicy", *h.MatchPolicy, matchPolicies))
	}
	allowed := sideEffectClasses
	if o.noSideEffects {
		allowed = noSideEffectClasses
	}
	if h.SideEffects == nil {
		errs = append(errs, validation.Error{Type: validation.TypeRequired, Field: p + ".sideEffects", Detail: "must specify one of " + strings.Join(allowed, ", ")})
	} else if !slices.Contains(allowed, *h.SideEffects) {
		errs = append(errs, notSupported(p+".sideEffects", *h.SideEffects, allowed))
	}
	if t := h.TimeoutSeconds; t != nil && (*t > 30 || *t < 1) {
		errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: p + ".timeoutSeconds", Value: int64(*t), Detail: "the timeout value must be between 1 and 30 seconds"})
	}
	for _, s := range []struct {
		field string
		sel   *rbac.LabelSelector
	}{{p + ".namespaceSelector", h.NamespaceSelector}, {p + ".objectSelector", h.ObjectSelector}} {
		errs = append(errs, validateSelector(s.field, s.sel)...)
	}
	if o.mutating && h.ReinvocationPolicy != nil && !slices.Contains(reinvocation, *h.ReinvocationPolicy) {
		errs = append(errs, notSupported(p+".reinvocationPolicy", *h.ReinvocationPolicy, reinvocation))
	}
	cc := h.ClientConfig
	switch {
	case (cc.URL == nil) == (cc.Service == nil):
		errs = append(errs, validation.Error{Type: validation.TypeRequired, Field: p + ".clientConfig", Detail: "exactly one of url or service is required"})
	case cc.URL != nil:
		errs = append(errs, ValidateURL(p+".clientConfig.url", *cc.URL)...)
	default:
		errs = append(errs, ValidateService(p+".clientConfig.service", cc.Service)...)
	}
	errs = append(errs, validateConditions(p+".matchConditions", h.MatchConditions)...)
	return errs
}

func fullyQualifiedName(field, name string) []validation.Error {
	if name == "" {
		return []validation.Error{{Type: validation.TypeRequired, Field: field}}
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return []validation.Error{{Type: validation.TypeInvalid, Field: field, Value: name, Detail: strings.Join(msgs, ",")}}
	}
	if len(strings.Split(name, ".")) < 3 {
		return []validation.Error{{Type: validation.TypeInvalid, Field: field, Value: name, Detail: "should be a domain with at least three segments separated by dots"}}
	}
	return nil
}

func validateRule(r *Rule, p string) []validation.Error {
	var errs []validation.Error
	if len(r.Operations) == 0 {
		errs = append(errs, validation.Error{Type: validation.TypeRequired, Field: p + ".operations"})
	}
	if len(r.Operations) > 1 && slices.Contains(r.Operations, "*") {
		errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: p + ".operations", Value: r.Operations, Detail: "if '*' is present, must not specify other operations"})
	}
	for i, op := range r.Operations {
		if !slices.Contains(operations, op) {
			errs = append(errs, notSupported(fmt.Sprintf("%s.operations[%d]", p, i), op, operations))
		}
	}
	if len(r.APIGroups) == 0 {
		errs = append(errs, validation.Error{Type: validation.TypeRequired, Field: p + ".apiGroups"})
	}
	if len(r.APIGroups) > 1 && slices.Contains(r.APIGroups, "*") {
		errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: p + ".apiGroups", Value: r.APIGroups, Detail: "if '*' is present, must not specify other API groups"})
	}
	if len(r.APIVersions) == 0 {
		errs = append(errs, validation.Error{Type: validation.TypeRequired, Field: p + ".apiVersions"})
	}
	if len(r.APIVersions) > 1 && slices.Contains(r.APIVersions, "*") {
		errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: p + ".apiVersions", Value: r.APIVersions, Detail: "if '*' is present, must not specify other API versions"})
	}
	for i, v := range r.APIVersions {
		if v == "" {
			errs = append(errs, validation.Error{Type: validation.TypeRequired, Field: fmt.Sprintf("%s.apiVersions[%d]", p, i)})
		}
	}
	errs = append(errs, validateResources(r.Resources, p+".resources")...)
	if r.Scope != nil && !slices.Contains(scopes, *r.Scope) {
		errs = append(errs, notSupported(p+".scope", *r.Scope, scopes))
	}
	return errs
}

// validateResources is kube's validateResources (subresources allowed).
func validateResources(resources []string, p string) []validation.Error {
	var errs []validation.Error
	if len(resources) == 0 {
		errs = append(errs, validation.Error{Type: validation.TypeRequired, Field: p})
	}
	wildSubOf, wildResOf := map[string]bool{}, map[string]bool{}
	var double, single, plain bool
	for i, rs := range resources {
		f := fmt.Sprintf("%s[%d]", p, i)
		if rs == "" {
			errs = append(errs, validation.Error{Type: validation.TypeRequired, Field: f})
			continue
		}
		double = double || rs == "*/*"
		single = single || rs == "*"
		res, sub, ok := strings.Cut(rs, "/")
		if !ok {
			plain = rs != "*"
			continue
		}
		if wildSubOf[res] {
			errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: f, Value: rs, Detail: fmt.Sprintf("if '%s/*' is present, must not specify %s", res, rs)})
		}
		if wildResOf[sub] {
			errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: f, Value: rs, Detail: fmt.Sprintf("if '*/%s' is present, must not specify %s", sub, rs)})
		}
		if sub == "*" {
			wildSubOf[res] = true
		}
		if res == "*" {
			wildResOf[sub] = true
		}
	}
	if len(resources) > 1 && double {
		errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: p, Value: resources, Detail: "if '*/*' is present, must not specify other resources"})
	}
	if single && plain {
		errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: p, Value: resources, Detail: "if '*' is present, must not specify other resources without subresources"})
	}
	return errs
}

func validateReviewVersions(versions []string, requireKnown bool, p string) []validation.Error {
	if len(versions) == 0 {
		return []validation.Error{{Type: validation.TypeRequired, Field: p, Detail: "must specify one of v1, v1beta1"}}
	}
	var errs []validation.Error
	seen := map[string]bool{}
	for i, v := range versions {
		f := fmt.Sprintf("%s[%d]", p, i)
		if seen[v] {
			errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: f, Value: v, Detail: "duplicate version"})
			continue
		}
		seen[v] = true
		for _, m := range validation.IsDNS1123Label(v) {
			errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: f, Value: v, Detail: m})
		}
	}
	if requireKnown && !slices.ContainsFunc(versions, knownVersion) {
		errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: p, Value: versions, Detail: "must include at least one of v1, v1beta1"})
	}
	return errs
}

func validateSelector(p string, s *rbac.LabelSelector) []validation.Error {
	if s == nil {
		return nil
	}
	var errs []validation.Error
	for k, v := range s.MatchLabels {
		for _, m := range validation.IsQualifiedName(k) {
			errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: p + ".matchLabels", Value: k, Detail: m})
		}
		for _, m := range validation.IsValidLabelValue(v) {
			errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: p + ".matchLabels", Value: v, Detail: m})
		}
	}
	for i, r := range s.MatchExpressions {
		f := fmt.Sprintf("%s.matchExpressions[%d]", p, i)
		switch r.Operator {
		case rbac.SelectorOpIn, rbac.SelectorOpNotIn:
			if len(r.Values) == 0 {
				errs = append(errs, validation.Error{Type: validation.TypeRequired, Field: f + ".values", Detail: "must be specified when `operator` is 'In' or 'NotIn'"})
			}
		case rbac.SelectorOpExists, rbac.SelectorOpDoesNotExist:
			if len(r.Values) > 0 {
				errs = append(errs, validation.Error{Type: validation.TypeForbidden, Field: f + ".values", Detail: "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"})
			}
		default:
			errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: f + ".operator", Value: r.Operator, Detail: "not a valid selector operator"})
		}
		for _, m := range validation.IsQualifiedName(r.Key) {
			errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: f + ".key", Value: r.Key, Detail: m})
		}
		for j, v := range r.Values {
			for _, m := range validation.IsValidLabelValue(v) {
				errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: fmt.Sprintf("%s.values[%d]", f, j), Value: v, Detail: m})
			}
		}
	}
	return errs
}

// ValidateURL is kube's ValidateWebhookURL with https forced, for the
// URL of a webhook's clientConfig at field path p: admission webhooks'
// and CRD conversion webhooks' alike.
func ValidateURL(p, raw string) []validation.Error {
	const form = "; desired format: https://host[/path]"
	u, err := url.Parse(raw)
	if err != nil {
		return []validation.Error{{Type: validation.TypeRequired, Field: p, Detail: "url must be a valid URL: " + err.Error() + form}}
	}
	var errs []validation.Error
	if u.Scheme != "https" {
		errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: p, Value: u.Scheme, Detail: "'https' is the only allowed URL scheme" + form})
	}
	if u.Host == "" {
		errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: p, Value: u.Host, Detail: "host must be specified" + form})
	}
	if u.User != nil {
		errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: p, Value: u.User.String(), Detail: "user information is not permitted in the URL"})
	}
	if u.Fragment != "" {
		errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: p, Value: u.Fragment, Detail: "fragments are not permitted in the URL"})
	}
	if u.RawQuery != "" {
		errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: p, Value: u.RawQuery, Detail: "query parameters are not permitted in the URL"})
	}
	return errs
}

// ValidateService is kube's ValidateWebhookService, for the service of a
// webhook's clientConfig at field path p (admission and conversion).
func ValidateService(p string, s *ServiceReference) []validation.Error {
	var errs []validation.Error
	if s.Name == "" {
		errs = append(errs, validation.Error{Type: validation.TypeRequired, Field: p + ".name"})
	}
	if s.Namespace == "" {
		errs = append(errs, validation.Error{Type: validation.TypeRequired, Field: p + ".namespace"})
	}
	if s.Port != nil && (*s.Port < 1 || *s.Port > 65535) {
		errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: p + ".port", Value: int64(*s.Port), Detail: "port is not valid: must be between 1 and 65535, inclusive"})
	}
	if s.Path == nil || *s.Path == "/" || *s.Path == "" {
		return errs
	}
	path := *s.Path
	if path == "//" {
		return append(errs, validation.Error{Type: validation.TypeInvalid, Field: p + ".path", Value: path, Detail: "segment[0] may not be empty"})
	}
	if !strings.HasPrefix(path, "/") {
		errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: p + ".path", Value: path, Detail: "must start with a '/'"})
	}
	check := strings.TrimSuffix(path[1:], "/")
	for i, step := range strings.Split(check, "/") {
		if step == "" {
			errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: p + ".path", Value: path, Detail: fmt.Sprintf("segment[%d] may not be empty", i)})
			continue
		}
		for _, m := range validation.IsDNS1123Subdomain(step) {
			errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: p + ".path", Value: path, Detail: fmt.Sprintf("segment[%d]: %v", i, m)})
		}
	}
	return errs
}

func validateConditions(p string, cs []MatchCondition) []validation.Error {
	var errs []validation.Error
	if len(cs) > 64 {
		errs = append(errs, validation.Error{Type: validation.TypeTooMany, Field: p, Value: int64(len(cs)), Detail: "must have at most 64 items"})
	}
	names := map[string]bool{}
	for i, c := range cs {
		f := fmt.Sprintf("%s[%d]", p, i)
		if strings.TrimSpace(c.Expression) == "" {
			errs = append(errs, validation.Error{Type: validation.TypeRequired, Field: f + ".expression"})
		}
		if c.Name == "" {
			errs = append(errs, validation.Error{Type: validation.TypeRequired, Field: f + ".name"})
		} else {
			for _, m := range validation.IsQualifiedName(c.Name) {
				errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: f + ".name", Value: c.Name, Detail: m})
			}
			if names[c.Name] {
				errs = append(errs, validation.Error{Type: validation.TypeDuplicate, Field: f + ".name", Value: c.Name})
			}
			names[c.Name] = true
		}
	}
	return errs
}
