package builtin

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strconv"
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

// jobStatusRules are the rules of kube's JobStatusValidationOptions that
// a status write applies (pkg/registry/batch/job/strategy.go's
// getStatusValidationOptions, JobManagedBy being GA): most apply only
// when the status fields they read changed, so a controller may go on
// writing a status that was already wrong (or became wrong when the user
// scaled the job down) as long as it does not touch those fields.
type jobStatusRules struct {
	decreasingSucceeded, invalidCompleted, invalidFailed, failedOverlap,
	completedNonIndexed, failedNoBackoffPerIndex, failedWithoutTarget,
	completeWithoutCriteria, finishedActive, finishedNoStart, finishedUncounted,
	startTimeUpdate, completionBeforeStart, notCompleteWithCompletion,
	completeWithoutCompletion, completeAndFailed, completeAndFailureTarget,
	moreReady, finishedTerminating bool
}

// jobCondition reports whether the job's status has a condition of type t
// with status s ("True" or "False").
func jobCondition(o map[string]any, t, s string) bool {
	for _, c := range maps(o, "status", "conditions") {
		if c["type"] == t && c["status"] == s {
			return true
		}
	}
	return false
}

func jobComplete(o map[string]any) bool { return jobCondition(o, "Complete", "True") }
func jobFailed(o map[string]any) bool   { return jobCondition(o, "Failed", "True") }
func jobFinished(o map[string]any) bool { return jobComplete(o) || jobFailed(o) }

// jobTime is a status time (startTime, completionTime), if set.
func jobTime(st map[string]any, key string) (time.Time, bool) {
	s, ok := st[key].(string)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, s)
	return t, err == nil
}

// sameJobTime is ptr.Equal of two *metav1.Time.
func sameJobTime(a, b map[string]any, key string) bool {
	ta, oka := jobTime(a, key)
	tb, okb := jobTime(b, key)
	return oka == okb && ta.Equal(tb)
}

// jobTimeValue is a time as kube's message shows it (metav1.Time's JSON).
func jobTimeValue(st map[string]any, key string) any {
	if t, ok := jobTime(st, key); ok {
		return t.UTC().Format(time.RFC3339)
	}
	return st[key]
}

// sameOptionalInt is ptr.Equal of two *int32 fields.
func sameOptionalInt(a, b map[string]any, key string) bool {
	return (a[key] == nil) == (b[key] == nil) && intAt(a, key) == intAt(b, key)
}

// uncountedPods is kube's internal batch.UncountedTerminatedPods, as its
// messages render it (JSON of a struct without json tags).
type uncountedPods struct {
	Succeeded []string
	Failed    []string
}

func uncounted(st map[string]any) *uncountedPods {
	u, ok := st["uncountedTerminatedPods"].(map[string]any)
	if !ok {
		return nil
	}
	strs := func(key string) []string {
		var out []string
		for _, v := range getList(u, key) {
			s, _ := v.(string)
			out = append(out, s)
		}
		return out
	}
	return &uncountedPods{Succeeded: strs("succeeded"), Failed: strs("failed")}
}

// sameUncounted is apiequality.Semantic.DeepEqual of two
// *UncountedTerminatedPods: nil and empty lists are equal.
func sameUncounted(a, b *uncountedPods) bool {
	if a == nil || b == nil {
		return a == b
	}
	return slices.Equal(a.Succeeded, b.Succeeded) && slices.Equal(a.Failed, b.Failed)
}

// jobStatusRulesFor is getStatusValidationOptions: which rules a status
// write from old to o applies.
func jobStatusRulesFor(o, old map[string]any) jobStatusRules {
	st, oldSt := getMap(o, "status"), getMap(old, "status")
	spec := getMap(o, "spec")
	indexed := getString(spec, "completionMode") == "Indexed"
	changed := func(f func(map[string]any) bool) bool { return f(o) != f(old) }
	condChanged := func(t string) bool { return jobCondition(o, t, "True") != jobCondition(old, t, "True") }
	finished, complete, failed := changed(jobFinished), changed(jobComplete), changed(jobFailed)
	failureTarget, criteria := condChanged("FailureTarget"), condChanged("SuccessCriteriaMet")
	completed := getString(st, "completedIndexes") != getString(oldSt, "completedIndexes")
	failedIdx := !equal(st["failedIndexes"], oldSt["failedIndexes"])
	active := intAt(st, "active") != intAt(oldSt, "active")
	start := !sameJobTime(st, oldSt, "startTime")
	completion := !sameJobTime(st, oldSt, "completionTime")
	suspend, _ := spec["suspend"].(bool)
	zeroCompletions := spec["completions"] != nil && intAt(spec, "completions") == 0
	resuming := jobCondition(old, "Suspended", "True") && jobCondition(o, "Suspended", "False")
	sameCounts := (spec["completions"] == nil) == (spec["parallelism"] == nil) && intAt(spec, "completions") == intAt(spec, "parallelism")
	return jobStatusRules{
		decreasingSucceeded:       !indexed || !sameCounts,
		invalidCompleted:          completed,
		invalidFailed:             failedIdx,
		completedNonIndexed:       completed,
		failedNoBackoffPerIndex:   failedIdx,
		failedOverlap:             failedIdx || completed,
		failedWithoutTarget:       failed || failedIdx,
		completeWithoutCriteria:   complete || criteria,
		finishedActive:            finished || active,
		finishedNoStart:           (finished || start) && !(suspend && zeroCompletions),
		finishedUncounted:         finished || !sameUncounted(uncounted(st), uncounted(oldSt)),
		startTimeUpdate:           start && !resuming,
		completionBeforeStart:     start || completion,
		notCompleteWithCompletion: complete || completion,
		completeWithoutCompletion: complete || completion,
		completeAndFailed:         complete || failed,
		completeAndFailureTarget:  complete || failureTarget,
		moreReady:                 !sameOptionalInt(st, oldSt, "ready") || active,
		finishedTerminating:       finished || !sameOptionalInt(st, oldSt, "terminating"),
	}
}

// validateJobStatusUpdate is kube's job status strategy's ValidateUpdate
// (ValidateJobStatusUpdate with getStatusValidationOptions): the status
// itself (validateJobStatus), then its transition from old. A status
//
//	{conditions: [{type: Complete, status: "True"}]}
//
// written on a job that had none has three causes, in kube's order:
// completionTime required, SuccessCriteriaMet=True required, startTime
// required.
func validateJobStatusUpdate(o, old registry.Object) fieldErrors {
	n, p := obj(o), obj(old)
	r := jobStatusRulesFor(n, p)
	errs := validateJobStatus(n, r)
	st, oldSt := getMap(n, "status"), getMap(p, "status")
	omit := validation.OmitValue
	for _, t := range []string{"Failed", "Complete", "FailureTarget"} {
		if jobCondition(p, t, "True") && !jobCondition(n, t, "True") {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "status.conditions", Value: omit, Detail: "cannot disable the terminal " + t + "=True condition"})
		}
	}
	if f := intAt(st, "failed"); f < intAt(oldSt, "failed") {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "status.failed", Value: f, Detail: "cannot decrease the failed counter"})
	}
	if s := intAt(st, "succeeded"); r.decreasingSucceeded && s < intAt(oldSt, "succeeded") {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "status.succeeded", Value: s, Detail: "cannot decrease the succeeded counter"})
	}
	_, hasCompletion := jobTime(st, "completionTime")
	_, hadCompletion := jobTime(oldSt, "completionTime")
	if hasCompletion && hadCompletion && !sameJobTime(st, oldSt, "completionTime") {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "status.completionTime", Value: jobTimeValue(st, "completionTime"), Detail: "field is immutable"})
	}
	_, hadStart := jobTime(oldSt, "startTime")
	suspend, _ := get(n, "spec", "suspend").(bool)
	if r.startTimeUpdate && hadStart && !sameJobTime(st, oldSt, "startTime") && !suspend {
		var v any = jobTimeValue(st, "startTime")
		if v == nil {
			v = nullValue{}
		}
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "status.startTime", Value: v, Detail: "field is immutable for unsuspended job once set"})
	}
	criteria, oldCriteria := jobCondition(n, "SuccessCriteriaMet", "True"), jobCondition(p, "SuccessCriteriaMet", "True")
	if oldCriteria && !criteria {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "status.conditions", Value: omit, Detail: "cannot disable the SuccessCriteriaMet=True condition"})
	}
	if jobComplete(p) && !oldCriteria && criteria {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "status.conditions", Value: omit, Detail: "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions"})
	}
	return errs
}

// nullValue renders as kube renders a nil pointer value: null.
type nullValue struct{}

func (nullValue) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// validateJobStatus is kube's validateJobStatus under the rules r.
func validateJobStatus(o map[string]any, r jobStatusRules) fieldErrors {
	st, spec := getMap(o, "status"), getMap(o, "spec")
	var errs fieldErrors
	for _, f := range []string{"active", "succeeded", "failed", "ready", "terminating"} {
		errs = append(errs, nonNegative(st, "status."+f, f)...)
	}
	if u := uncounted(st); u != nil {
		seen := map[string]bool{}
		for _, l := range []struct {
			name string
			uids []string
		}{{"succeeded", u.Succeeded}, {"failed", u.Failed}} {
			for i, k := range l.uids {
				p := fmt.Sprintf("status.uncountedTerminatedPods.%s[%d]", l.name, i)
				switch {
				case k == "":
					errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: p, Value: k, Detail: "must not be empty"})
				case seen[k]:
					errs = append(errs, registry.FieldError{Type: validation.TypeDuplicate, Field: p, Value: k})
				default:
					seen[k] = true
				}
			}
		}
	}
	omit := validation.OmitValue
	conds := func(detail string) registry.FieldError {
		return registry.FieldError{Type: validation.TypeInvalid, Field: "status.conditions", Value: omit, Detail: detail}
	}
	complete, failed := jobComplete(o), jobFailed(o)
	failureTarget, criteria := jobCondition(o, "FailureTarget", "True"), jobCondition(o, "SuccessCriteriaMet", "True")
	start, hasStart := jobTime(st, "startTime")
	completion, hasCompletion := jobTime(st, "completionTime")
	if r.completeAndFailed && complete && failed {
		errs = append(errs, conds("cannot set Complete=True and Failed=true conditions"))
	}
	if r.completeAndFailureTarget && complete && failureTarget {
		errs = append(errs, conds("cannot set Complete=True and FailureTarget=true conditions"))
	}
	if r.notCompleteWithCompletion && hasCompletion && !complete {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "status.completionTime", Value: jobTimeValue(st, "completionTime"), Detail: "cannot set completionTime when there is no Complete=True condition"})
	}
	if r.completeWithoutCompletion && !hasCompletion && complete {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: "status.completionTime", Detail: "completionTime is required for Complete jobs"})
	}
	if r.completionBeforeStart && hasStart && hasCompletion && completion.Before(start) {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "status.completionTime", Value: jobTimeValue(st, "completionTime"), Detail: "must be equal to or after `startTime`"})
	}
	if r.failedWithoutTarget && failed && !failureTarget {
		errs = append(errs, conds("cannot set Failed=True condition without the FailureTarget=true condition"))
	}
	if r.completeWithoutCriteria && complete && !criteria {
		errs = append(errs, conds("cannot set Complete=True condition without the SuccessCriteriaMet=true condition"))
	}
	finished := complete || failed
	if active := intAt(st, "active"); r.finishedActive && active > 0 && finished {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "status.active", Value: active, Detail: "active>0 is invalid for finished job"})
	}
	if r.finishedNoStart && !hasStart && finished {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: "status.startTime", Detail: "startTime is required for finished job"})
	}
	if u := uncounted(st); r.finishedUncounted && finished && u != nil && len(u.Failed)+len(u.Succeeded) > 0 {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "status.uncountedTerminatedPods", Value: u, Detail: "must be empty for finished job"})
	}
	completions, hasCompletions := int32(intAt(spec, "completions")), spec["completions"] != nil
	completedIdx := getString(st, "completedIndexes")
	failedIdx, hasFailedIdx := st["failedIndexes"].(string)
	perIndex := spec["backoffLimitPerIndex"] != nil
	if r.invalidCompleted && hasCompletions {
		if err := jobIndexesFormat(completedIdx, completions); err != nil {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "status.completedIndexes", Value: completedIdx, Detail: "error parsing completedIndexes: " + err.Error()})
		}
	}
	if r.invalidFailed && hasCompletions && perIndex && hasFailedIdx {
		if err := jobIndexesFormat(failedIdx, completions); err != nil {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "status.failedIndexes", Value: failedIdx, Detail: "error parsing failedIndexes: " + err.Error()})
		}
	}
	if r.completedNonIndexed && completedIdx != "" && getString(spec, "completionMode") != "Indexed" {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "status.completedIndexes", Value: completedIdx, Detail: "cannot set non-empty completedIndexes when non-indexed completion mode"})
	}
	if r.failedNoBackoffPerIndex && !perIndex && hasFailedIdx {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "status.failedIndexes", Value: failedIdx, Detail: "cannot set non-null failedIndexes when backoffLimitPerIndex is null"})
	}
	if r.failedOverlap && hasCompletions && hasFailedIdx {
		if err := jobIndexesOverlap(completedIdx, failedIdx, completions); err != nil {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "status.failedIndexes", Value: failedIdx, Detail: err.Error()})
		}
	}
	if t := intAt(st, "terminating"); r.finishedTerminating && st["terminating"] != nil && t > 0 && finished {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "status.terminating", Value: t, Detail: "terminating>0 is invalid for finished job"})
	}
	if ready := intAt(st, "ready"); r.moreReady && st["ready"] != nil && ready > intAt(st, "active") {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "status.ready", Value: ready, Detail: "cannot set more ready pods than active"})
	}
	if criteria && failed {
		errs = append(errs, conds("cannot set SuccessCriteriaMet=True and Failed=true conditions"))
	}
	if criteria && failureTarget {
		errs = append(errs, conds("cannot set SuccessCriteriaMet=True and FailureTarget=true conditions"))
	}
	if spec["successPolicy"] != nil && !criteria && complete {
		errs = append(errs, conds("cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True"))
	}
	return errs
}

// jobIndexesFormat is kube's validateIndexesFormat: "1,3-5,7", each
// index below completions, in increasing order.
func jobIndexesFormat(s string, completions int32) error {
	if s == "" {
		return nil
	}
	var last *int32
	for _, part := range strings.Split(s, ",") {
		x, y, err := jobIndexInterval(part, completions)
		if err != nil {
			return err
		}
		if last != nil && *last >= x {
			return fmt.Errorf("non-increasing order, previous: %d, current: %d", *last, x)
		}
		last = &y
	}
	return nil
}

// jobIndexInterval is kube's parseIndexInterval: "3" or "3-5".
func jobIndexInterval(s string, completions int32) (int32, int32, error) {
	limits := strings.Split(s, "-")
	if len(limits) > 2 {
		return 0, 0, fmt.Errorf("the fragment %q violates the requirement that an index interval can have at most two parts separated by '-'", s)
	}
	x, err := strconv.Atoi(limits[0])
	if err != nil {
		return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", limits[0])
	}
	if x >= int(completions) {
		return 0, 0, fmt.Errorf("too large index: %q", limits[0])
	}
	if len(limits) == 1 {
		return int32(x), int32(x), nil
	}
	y, err := strconv.Atoi(limits[1])
	if err != nil {
		return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", limits[1])
	}
	if y >= int(completions) {
		return 0, 0, fmt.Errorf("too large index: %q", limits[1])
	}
	if x >= y {
		return 0, 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", x, y)
	}
	return int32(x), int32(y), nil
}

// jobIndexesOverlap is kube's validateFailedIndexesNotOverlapCompleted:
// intervals that do not parse are skipped (the format rule reports them).
func jobIndexesOverlap(completed, failed string, completions int32) error {
	if completed == "" || failed == "" {
		return nil
	}
	cs, fs := strings.Split(completed, ","), strings.Split(failed, ",")
	var ci, fi int
	cX, cY, cErr := jobIndexInterval(cs[ci], completions)
	fX, fY, fErr := jobIndexInterval(fs[fi], completions)
	for ci < len(cs) && fi < len(fs) {
		switch {
		case cErr != nil:
			if ci++; ci < len(cs) {
				cX, cY, cErr = jobIndexInterval(cs[ci], completions)
			}
		case fErr != nil:
			if fi++; fi < len(fs) {
				fX, fY, fErr = jobIndexInterval(fs[fi], completions)
			}
		case cX <= fY && fX <= cY:
			return fmt.Errorf("failedIndexes and completedIndexes overlap at index: %d", max(cX, fX))
		case cX <= fX:
			if ci++; ci < len(cs) {
				cX, cY, cErr = jobIndexInterval(cs[ci], completions)
			}
		default:
			if fi++; fi < len(fs) {
				fX, fY, fErr = jobIndexInterval(fs[fi], completions)
			}
		}
	}
	return nil
}
