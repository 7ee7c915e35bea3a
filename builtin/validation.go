package builtin

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"time"

	"github.com/kapi-dev/kapi/internal/validation"
	"github.com/kapi-dev/kapi/registry"
)

// The validation of the kinds beyond pods and services that users meet
// first (kube's pkg/apis/*/validation), with kube's paths, types and
// messages: counts that may not be negative, enumerations, required
// fields, addresses, and the fields an update may not change.

type fieldErrors = []registry.FieldError

// nonNegative checks that the integer at path (if set) is ≥ 0.
func nonNegative(m map[string]any, field string, path ...string) fieldErrors {
	v := get(m, path...)
	if v == nil || intAt(m, path...) >= 0 {
		return nil
	}
	return fieldErrors{{Type: validation.TypeInvalid, Field: field, Value: v, Detail: "must be greater than or equal to 0"}}
}

// oneOf checks that the string at path is one of supported (when set,
// or always when required).
func oneOf(m map[string]any, field string, required bool, supported []string, path ...string) fieldErrors {
	v, ok := get(m, path...).(string)
	if !ok && !required {
		return nil
	}
	for _, s := range supported {
		if v == s {
			return nil
		}
	}
	if v == "" && required {
		return fieldErrors{{Type: validation.TypeRequired, Field: field}}
	}
	q := make([]string, len(supported))
	for i, s := range supported {
		q[i] = fmt.Sprintf("%q", s)
	}
	return fieldErrors{{Type: validation.TypeNotSupported, Field: field, Value: v, Detail: "supported values: " + strings.Join(q, ", ")}}
}

// immutable refuses a change of the value at path, naming the new value.
func immutable(o, old registry.Object, field string, path ...string) fieldErrors {
	v := get(obj(o), path...)
	if equal(v, get(obj(old), path...)) {
		return nil
	}
	return fieldErrors{{Type: validation.TypeInvalid, Field: field, Value: v, Detail: "field is immutable"}}
}

// validateTemplate is ValidatePodTemplateSpecForReplicaSet's part the
// apps/v1 workloads and ReplicationControllers share: the template's
// labels, and restartPolicy Always.
func validateTemplate(spec map[string]any) fieldErrors {
	var errs fieldErrors
	labels := stringMap(getMap(spec, "template", "metadata", "labels"))
	for _, k := range sortedKeys(labels) {
		errs = appendInvalid(errs, "spec.template.labels", k, validation.IsQualifiedName(k))
		errs = appendInvalid(errs, "spec.template.labels", labels[k], validation.IsValidLabelValue(labels[k]))
	}
	if rp := getString(spec, "template", "spec", "restartPolicy"); rp != "Always" && getMap(spec, "template", "spec") != nil {
		errs = append(errs, registry.FieldError{Type: validation.TypeNotSupported, Field: "spec.template.spec.restartPolicy", Value: rp, Detail: `supported values: "Always"`})
	}
	return errs
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// validateDeploymentSpec is ValidateDeploymentSpec's replicas and
// strategy rules.
func validateDeploymentSpec(spec map[string]any) fieldErrors {
	errs := nonNegative(spec, "spec.replicas", "replicas")
	errs = append(errs, validateTemplate(spec)...)
	st := getMap(spec, "strategy")
	switch t := getString(st, "type"); t {
	case "Recreate":
		if st["rollingUpdate"] != nil {
			errs = append(errs, registry.FieldError{Type: validation.TypeForbidden, Field: "spec.strategy.rollingUpdate", Detail: "may not be specified when strategy `type` is 'Recreate'"})
		}
	case "RollingUpdate":
		ru := getMap(st, "rollingUpdate")
		if isZeroIntOrPercent(ru["maxSurge"]) && isZeroIntOrPercent(ru["maxUnavailable"]) {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "spec.strategy.rollingUpdate.maxUnavailable", Value: ru["maxUnavailable"], Detail: "may not be 0 when `maxSurge` is 0"})
		}
	default:
		errs = append(errs, registry.FieldError{Type: validation.TypeNotSupported, Field: "spec.strategy",
			Value: struct {
				Type          string
				RollingUpdate any
			}{t, nil}, Detail: `supported values: "Recreate", "RollingUpdate"`})
	}
	return errs
}

func isZeroIntOrPercent(v any) bool {
	switch x := v.(type) {
	case json.Number:
		return x == "0"
	case string:
		return x == "0%" || x == "0"
	}
	return false
}

// validateJobSpec is ValidateJobSpec's counts and completion mode.
func validateJobSpec(spec map[string]any) fieldErrors {
	errs := nonNegative(spec, "spec.parallelism", "parallelism")
	errs = append(errs, nonNegative(spec, "spec.completions", "completions")...)
	errs = append(errs, nonNegative(spec, "spec.backoffLimit", "backoffLimit")...)
	return append(errs, oneOf(spec, "spec.completionMode", false, []string{"NonIndexed", "Indexed"}, "completionMode")...)
}

// validateGeneratedSelector is ValidateGeneratedSelector: without
// manualSelector, a job's selector is the one kube generated.
func validateGeneratedSelector(o registry.Object) fieldErrors {
	spec := getMap(obj(o), "spec")
	if m, _ := spec["manualSelector"].(bool); m {
		return nil
	}
	sel := getMap(spec, "selector")
	want := map[string]any{"matchLabels": map[string]any{jobUIDLabel: o.UID()}}
	if sel == nil || equal(sel, want) {
		return nil
	}
	return fieldErrors{{Type: validation.TypeInvalid, Field: "spec.selector", Value: sel, Detail: "`selector` not auto-generated"}}
}

// validateCronJob is ValidateCronJobSpec's schedule, time zone and
// concurrency policy.
func validateCronJob(_ context.Context, o registry.Object) fieldErrors {
	spec := getMap(obj(o), "spec")
	var errs fieldErrors
	switch sched := getString(spec, "schedule"); {
	case sched == "":
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: "spec.schedule"})
	case !strings.HasPrefix(sched, "@"):
		if f := strings.Fields(sched); len(f) != 5 {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "spec.schedule", Value: sched,
				Detail: fmt.Sprintf("expected exactly 5 fields, found %d: %v", len(f), f)})
		}
	}
	if tz, ok := spec["timeZone"].(string); ok {
		if _, err := time.LoadLocation(tz); err != nil || tz == "" || strings.EqualFold(tz, "local") {
			detail := "unknown time zone " + tz
			if err != nil {
				detail = err.Error()
			}
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "spec.timeZone", Value: tz, Detail: detail})
		}
	}
	return append(errs, oneOf(spec, "spec.concurrencyPolicy", true, []string{"Allow", "Forbid", "Replace"}, "concurrencyPolicy")...)
}

func validateLease(_ context.Context, o registry.Object) fieldErrors {
	spec := getMap(obj(o), "spec")
	var errs fieldErrors
	if v := get(spec, "leaseDurationSeconds"); v != nil && intAt(spec, "leaseDurationSeconds") <= 0 {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "spec.leaseDurationSeconds", Value: v, Detail: "must be greater than 0"})
	}
	return append(errs, nonNegative(spec, "spec.leaseTransitions", "leaseTransitions")...)
}

// validatePDB is ValidatePodDisruptionBudgetSpec's minAvailable and
// maxUnavailable (not both; an integer ≥ 0 or a percentage ≤ 100%).
func validatePDB(_ context.Context, o registry.Object) fieldErrors {
	spec := getMap(obj(o), "spec")
	var errs fieldErrors
	if spec["minAvailable"] != nil && spec["maxUnavailable"] != nil {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "spec", Value: goValue("policy.PodDisruptionBudgetSpec", spec), Detail: "minAvailable and maxUnavailable cannot be both set"})
	}
	for _, f := range []string{"minAvailable", "maxUnavailable"} {
		switch v := spec[f].(type) {
		case json.Number:
			errs = append(errs, nonNegative(spec, "spec."+f, f)...)
		case string:
			n, err := parsePercent(v)
			switch {
			case err != nil:
				errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "spec." + f, Value: v, Detail: "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"})
			case n > 100:
				errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "spec." + f, Value: v, Detail: "must not be greater than 100%"})
			}
		}
	}
	return errs
}

func parsePercent(s string) (int, error) {
	if !strings.HasSuffix(s, "%") || len(s) < 2 {
		return 0, fmt.Errorf("not a percent")
	}
	n := 0
	for _, c := range s[:len(s)-1] {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("not a percent")
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}

// validateIngress is ValidateIngressSpec's rules: a backend or rules,
// hosts that are not IPs, paths absolute with a pathType.
func validateIngress(_ context.Context, o registry.Object) fieldErrors {
	spec := getMap(obj(o), "spec")
	var errs fieldErrors
	if spec["defaultBackend"] == nil && len(getList(spec, "rules")) == 0 {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "spec", Value: nil, Detail: "either `defaultBackend` or `rules` must be specified"})
	}
	for i, r := range maps(spec, "rules") {
		rp := "spec.rules[" + itoa(i) + "]"
		if h := getString(r, "host"); h != "" {
			if _, err := netip.ParseAddr(h); err == nil {
				errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: rp + ".host", Value: h, Detail: "must be a DNS name, not an IP address"})
			}
		}
		for j, p := range maps(r, "http", "paths") {
			pp := rp + ".http.paths[" + itoa(j) + "]"
			pt, ok := p["pathType"].(string)
			if !ok {
				errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: pp + ".pathType", Detail: "pathType must be specified"})
				continue
			}
			if path := getString(p, "path"); (pt == "Prefix" || pt == "Exact") && !strings.HasPrefix(path, "/") {
				errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: pp + ".path", Value: path, Detail: "must be an absolute path"})
			}
		}
	}
	return errs
}

// validateNetworkPolicy checks the policy types, ipBlock CIDRs and port
// numbers of a NetworkPolicy.
func validateNetworkPolicy(_ context.Context, o registry.Object) fieldErrors {
	spec := getMap(obj(o), "spec")
	var errs fieldErrors
	for i, t := range getList(spec, "policyTypes") {
		if t != "Ingress" && t != "Egress" {
			errs = append(errs, registry.FieldError{Type: validation.TypeNotSupported, Field: "spec.policyTypes[" + itoa(i) + "]", Value: t, Detail: `supported values: "Ingress", "Egress"`})
		}
	}
	for _, dir := range []struct{ list, peers string }{{"ingress", "from"}, {"egress", "to"}} {
		for i, rule := range maps(spec, dir.list) {
			rp := "spec." + dir.list + "[" + itoa(i) + "]"
			for j, p := range maps(rule, "ports") {
				if n, ok := p["port"].(json.Number); ok {
					if v, _ := n.Int64(); v < 1 || v > 65535 {
						errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: rp + ".ports[" + itoa(j) + "].port", Value: n, Detail: portRange})
					}
				}
			}
			for j, peer := range maps(rule, dir.peers) {
				if cidr, ok := get(peer, "ipBlock", "cidr").(string); ok {
					if _, err := netip.ParsePrefix(cidr); err != nil {
						errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: rp + "." + dir.peers + "[" + itoa(j) + "].ipBlock.cidr", Value: cidr,
							Detail: "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"})
					}
				}
			}
		}
	}
	return errs
}

// invalidIP is kube's message for an address that is not an IP.
const invalidIP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"

func validateEndpointSlice(_ context.Context, o registry.Object) fieldErrors {
	m := obj(o)
	errs := oneOf(m, "addressType", true, []string{"FQDN", "IPv4", "IPv6"}, "addressType")
	if len(errs) > 0 {
		return errs
	}
	if t := getString(m, "addressType"); t == "IPv4" || t == "IPv6" {
		for i, e := range maps(m, "endpoints") {
			for j, a := range getList(e, "addresses") {
				s, _ := a.(string)
				if ip, err := netip.ParseAddr(s); err != nil || ip.Is4() != (t == "IPv4") {
					errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: fmt.Sprintf("endpoints[%d].addresses[%d]", i, j), Value: s, Detail: invalidIP})
				}
			}
		}
	}
	return errs
}

func validatePVC(_ context.Context, o registry.Object) fieldErrors {
	spec := getMap(obj(o), "spec")
	var errs fieldErrors
	if len(getList(spec, "accessModes")) == 0 {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: "spec.accessModes", Detail: "at least 1 access mode is required"})
	}
	if get(spec, "resources", "requests", "storage") == nil {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: "spec.resources[storage]"})
	}
	return errs
}

func validateResourceQuota(_ context.Context, o registry.Object) fieldErrors {
	var errs fieldErrors
	hard := getMap(obj(o), "spec", "hard")
	for _, k := range sortedKeys(stringMap(hard)) {
		if q, ok := quantityValue(hard[k]); ok && q.Sign() < 0 {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "spec.hard[" + k + "]", Value: hard[k], Detail: "must be greater than or equal to 0"})
		}
	}
	return errs
}

func validateStorageClass(_ context.Context, o registry.Object) fieldErrors {
	m := obj(o)
	var errs fieldErrors
	if getString(m, "provisioner") == "" {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: "provisioner"})
	}
	return append(errs, oneOf(m, "reclaimPolicy", false, []string{"Delete", "Retain"}, "reclaimPolicy")...)
}

// validateStorageClassUpdate adds the fields a StorageClass keeps
// (kube names no value: null).
func validateStorageClassUpdate(ctx context.Context, o, old registry.Object) fieldErrors {
	errs := validateStorageClass(ctx, o)
	for _, f := range []string{"parameters", "provisioner", "reclaimPolicy", "volumeBindingMode"} {
		if !equal(obj(o)[f], obj(old)[f]) {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: f, Value: nil, Detail: "field is immutable"})
		}
	}
	return errs
}

// validateControllerRevision is ValidateControllerRevision: data is
// required and revision not negative.
func validateControllerRevision(_ context.Context, o registry.Object) fieldErrors {
	m := obj(o)
	var errs fieldErrors
	if m["data"] == nil {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: "data", Detail: "data is mandatory"})
	}
	return append(errs, nonNegative(m, "revision", "revision")...)
}

func validateControllerRevisionUpdate(ctx context.Context, o, old registry.Object) fieldErrors {
	return append(validateControllerRevision(ctx, o), immutable(o, old, "data", "data")...)
}

// maxUserPriority is the highest priority a user's PriorityClass may
// have.
const maxUserPriority = 1000000000

func validatePriorityClass(_ context.Context, o registry.Object) fieldErrors {
	var errs fieldErrors
	if name := o.Name(); strings.HasPrefix(name, "system-") && name != "system-cluster-critical" && name != "system-node-critical" {
		errs = append(errs, registry.FieldError{Type: validation.TypeForbidden, Field: "metadata.name",
			Detail: "priority class names with 'system-' prefix are reserved for system use only. error: " + name + " is not a known system priority class"})
	}
	if intAt(obj(o), "value") > maxUserPriority {
		errs = append(errs, registry.FieldError{Type: validation.TypeForbidden, Field: "value", Detail: fmt.Sprintf("maximum allowed value of a user defined priority is %d", maxUserPriority)})
	}
	return errs
}

func validatePriorityClassUpdate(ctx context.Context, o, old registry.Object) fieldErrors {
	errs := validatePriorityClass(ctx, o)
	if !equal(obj(o)["value"], obj(old)["value"]) {
		errs = append(errs, registry.FieldError{Type: validation.TypeForbidden, Field: "value", Detail: "may not be changed in an update."})
	}
	return errs
}

func validateIngressClass(_ context.Context, o registry.Object) fieldErrors {
	c := getString(obj(o), "spec", "controller")
	i := strings.Index(c, "/")
	if c == "" || (i > 0 && len(validation.IsDNS1123Subdomain(c[:i])) == 0) {
		return nil
	}
	return fieldErrors{{Type: validation.TypeInvalid, Field: "spec.controller", Value: c, Detail: `must be a domain-prefixed path (such as "acme.io/foo")`}}
}

// validateHPA is kube's ValidateHorizontalPodAutoscaler spec rules, the
// same for autoscaling/v1 and v2 (their spec shares these fields):
// minReplicas not negative, maxReplicas set (kube's declarative
// validation words it "Required value") and not below minReplicas, the
// metrics (hpavalidation.go), and a scaleTargetRef with a kind, a name and an apiVersion naming a
// group (a ReplicationController's may have none). {maxReplicas: 0,
// scaleTargetRef: {kind: Deployment, name: web}} has three causes:
// maxReplicas required, maxReplicas below minReplicas (defaulted to 1),
// and the apiVersion without a group.
func validateHPA(_ context.Context, o registry.Object) fieldErrors {
	return validateHPASpec(getMap(obj(o), "spec"), false)
}

// validateHPAUpdate is validateHPA, which does not check the apiVersion
// of a scaleTargetRef whose apiVersion and kind the update keeps (kube's
// validationOptionsForHorizontalPodAutoscaler).
func validateHPAUpdate(ctx context.Context, o, old registry.Object) fieldErrors {
	if statusWrite(ctx) {
		return validateHPAStatus(getMap(obj(o), "status"))
	}
	spec, was := getMap(obj(o), "spec"), getMap(obj(old), "spec")
	keep := equal(get(spec, "scaleTargetRef", "apiVersion"), get(was, "scaleTargetRef", "apiVersion")) &&
		equal(get(spec, "scaleTargetRef", "kind"), get(was, "scaleTargetRef", "kind"))
	return validateHPASpec(spec, keep)
}

// validateHPAStatus is ValidateHorizontalPodAutoscalerStatusUpdate, what
// the status subresource checks (and nothing of the spec): the replica
// counts and the conditions' observedGeneration are not negative.
func validateHPAStatus(status map[string]any) fieldErrors {
	var errs fieldErrors
	for i, c := range maps(status, "conditions") {
		errs = append(errs, nonNegative(c, fmt.Sprintf("status.conditions[%d].observedGeneration", i), "observedGeneration")...)
	}
	errs = append(errs, nonNegative(status, "status.currentReplicas", "currentReplicas")...)
	return append(errs, nonNegative(status, "status.desiredReplicas", "desiredReplicas")...)
}

func validateHPASpec(spec map[string]any, keepAPIVersion bool) fieldErrors {
	var errs fieldErrors
	// kube v1.37 scales to zero (HPAScaleToZero): minReplicas may be 0.
	if v := get(spec, "minReplicas"); v != nil && intAt(spec, "minReplicas") < 0 {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "spec.minReplicas", Value: intAt(spec, "minReplicas"), Detail: "must be greater than or equal to 0"})
	}
	max := intAt(spec, "maxReplicas")
	switch {
	case max == 0:
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: "spec.maxReplicas"})
	case max < 0:
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "spec.maxReplicas", Value: max, Detail: "must be greater than or equal to 1"})
	}
	if get(spec, "minReplicas") != nil && max < intAt(spec, "minReplicas") {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "spec.maxReplicas", Value: max, Detail: "must be greater than or equal to `minReplicas`"})
	}
	errs = append(errs, validateHPAMetrics(spec)...)
	ref := getMap(spec, "scaleTargetRef")
	for _, f := range []string{"kind", "name"} {
		v := getString(ref, f)
		if v == "" {
			errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: "spec.scaleTargetRef." + f})
		}
		errs = appendInvalid(errs, "spec.scaleTargetRef."+f, v, pathSegmentName(v))
	}
	if !keepAPIVersion {
		av := getString(ref, "apiVersion")
		var msg string
		switch group, _, ok := strings.Cut(av, "/"); {
		case strings.Count(av, "/") > 1:
			msg = "unexpected GroupVersion string: " + av
		case av == "" || av == "/" || !ok || group == "":
			if getString(ref, "kind") != "ReplicationController" {
				msg = "apiVersion must specify API group"
			}
		}
		if msg != "" {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "spec.scaleTargetRef.apiVersion", Value: av, Detail: msg})
		}
	}
	return errs
}

// pathSegmentName is apimachinery's IsPathSegmentName: what a name that
// is a path segment may not be or contain.
func pathSegmentName(name string) []string {
	if name == "." || name == ".." {
		return []string{"may not be '" + name + "'"}
	}
	var msgs []string
	for _, c := range []string{"/", "%"} {
		if strings.Contains(name, c) {
			msgs = append(msgs, "may not contain '"+c+"'")
		}
	}
	return msgs
}

// validateSecretContents adds to validateSecret the data keys and the
// typed secrets' contents kube checks.
func validateSecretContents(o registry.Object) fieldErrors {
	m := obj(o)
	data := getMap(m, "data")
	var errs fieldErrors
	for _, k := range sortedKeys(stringMap(data)) {
		errs = appendInvalid(errs, "data["+k+"]", k, validation.IsConfigMapKey(k))
	}
	switch getString(m, "type") {
	case "kubernetes.io/dockerconfigjson":
		if s, ok := data[".dockerconfigjson"].(string); ok {
			raw, _ := base64.StdEncoding.DecodeString(s)
			var v map[string]any
			if err := json.Unmarshal(raw, &v); err != nil {
				errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "data[.dockerconfigjson]", Value: "<secret contents redacted>", Detail: err.Error()})
			}
		}
	case "kubernetes.io/basic-auth":
		_, u := data["username"]
		_, p := data["password"]
		if !u && !p {
			errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: "data[username]"},
				registry.FieldError{Type: validation.TypeRequired, Field: "data[password]"})
		}
	case "kubernetes.io/service-account-token":
		if getString(m, "metadata", "annotations", "kubernetes.io/service-account.name") == "" {
			errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: "metadata.annotations[kubernetes.io/service-account.name]"})
		}
	}
	return errs
}
