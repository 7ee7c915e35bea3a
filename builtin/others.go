package builtin

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kapi-dev/kapi/internal/validation"
	"github.com/kapi-dev/kapi/registry"
)

// The defaults of the other kinds (pkg/apis/*/v1/defaults.go), and what
// kube's default admission plugins add that clients read.

func defaultEndpoints(_ context.Context, o registry.Object) error {
	for _, s := range maps(obj(o), "subsets") {
		for _, p := range maps(s, "ports") {
			def(p, "protocol", "TCP")
		}
	}
	return nil
}

func defaultEndpointSlice(_ context.Context, o registry.Object) error {
	for _, p := range maps(obj(o), "ports") {
		def(p, "name", "")
		def(p, "protocol", "TCP")
	}
	return nil
}

func defaultPersistentVolume(_ context.Context, o registry.Object) error {
	spec := ensureMap(obj(o), "spec")
	def(spec, "persistentVolumeReclaimPolicy", "Retain")
	def(spec, "volumeMode", "Filesystem")
	def(getMap(spec, "hostPath"), "type", "")
	return nil
}

// now is the time a strategy stamps a status with, on the registry's
// clock (registry.Now), as kube's metav1.Time writes it.
func now(ctx context.Context) string { return registry.Now(ctx).UTC().Format(time.RFC3339) }

func preparePersistentVolumeCreate(ctx context.Context, o registry.Object) error {
	status := ensureMap(obj(o), "status")
	status["phase"] = "Pending"
	status["lastPhaseTransitionTime"] = now(ctx)
	return nil
}

// prepareNodeCreate taints a new node not-ready, as kube's
// TaintNodesByCondition admission does until its kubelet reports.
func prepareNodeCreate(_ context.Context, o registry.Object) error {
	spec := ensureMap(obj(o), "spec")
	for _, t := range maps(spec, "taints") {
		if getString(t, "key") == "node.kubernetes.io/not-ready" {
			return nil
		}
	}
	l, _ := spec["taints"].([]any)
	spec["taints"] = append(l, map[string]any{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"})
	return nil
}

// defaultLimitRange is SetDefaults_LimitRangeItem: a container's default
// limit comes from max, its default request from the default limit, then
// from min.
func defaultLimitRange(_ context.Context, o registry.Object) error {
	for _, item := range maps(obj(o), "spec", "limits") {
		if getString(item, "type") != "Container" {
			continue
		}
		dflt, req := getMap(item, "default"), getMap(item, "defaultRequest")
		if dflt == nil {
			dflt = map[string]any{}
		}
		if req == nil {
			req = map[string]any{}
		}
		for k, v := range getMap(item, "max") {
			def(dflt, k, clone(v))
		}
		for k, v := range dflt {
			def(req, k, clone(v))
		}
		for k, v := range getMap(item, "min") {
			def(req, k, clone(v))
		}
		if len(dflt) > 0 {
			item["default"] = dflt
		}
		if len(req) > 0 {
			item["defaultRequest"] = req
		}
	}
	return nil
}

// defaultHPAv1 is autoscaling/v1's: minReplicas 1 and, without a target,
// 80% CPU.
func defaultHPAv1(_ context.Context, o registry.Object) error {
	spec := ensureMap(obj(o), "spec")
	def(spec, "minReplicas", num(1))
	def(spec, "targetCPUUtilizationPercentage", num(80))
	return nil
}

// defaultHPAv2 is autoscaling/v2's: minReplicas 1 and, without metrics,
// 80% average CPU utilization.
func defaultHPAv2(_ context.Context, o registry.Object) error {
	spec := ensureMap(obj(o), "spec")
	def(spec, "minReplicas", num(1))
	if len(getList(spec, "metrics")) == 0 {
		spec["metrics"] = []any{map[string]any{"type": "Resource", "resource": map[string]any{"name": "cpu",
			"target": map[string]any{"type": "Utilization", "averageUtilization": num(80)}}}}
	}
	defaultHPABehavior(spec)
	if st, ok := o["status"].(map[string]any); ok {
		def(st, "currentMetrics", nil) // Go's JSON of its nil list
	}
	return nil
}

// defaultHPABehavior is SetDefaults_HorizontalPodAutoscalerBehavior: a
// behavior's scaleUp and scaleDown rules get kube's defaults for what
// they leave out (scale up: no stabilization window, at most 4 pods or
// 100% per 15s, the larger; scale down: 100% per 15s).
func defaultHPABehavior(spec map[string]any) {
	b := getMap(spec, "behavior")
	if b == nil {
		return
	}
	policy := func(t string, value, period int64) map[string]any {
		return map[string]any{"type": t, "value": num(value), "periodSeconds": num(period)}
	}
	up := ensureMap(b, "scaleUp")
	def(up, "stabilizationWindowSeconds", num(0))
	def(up, "selectPolicy", "Max")
	def(up, "policies", []any{policy("Pods", 4, 15), policy("Percent", 100, 15)})
	down := ensureMap(b, "scaleDown")
	def(down, "selectPolicy", "Max")
	def(down, "policies", []any{policy("Percent", 100, 15)})
}

// prepareHPAv2Create writes the status Go's JSON writes for kube's
// (currentMetrics has no omitempty).
func prepareHPAv2Create(_ context.Context, o registry.Object) error {
	ensureMap(obj(o), "status")["currentMetrics"] = nil
	return nil
}

// defaultNetworkPolicy: ports' protocol TCP; policyTypes Ingress, and
// Egress when the policy has egress rules.
func defaultNetworkPolicy(_ context.Context, o registry.Object) error {
	spec := ensureMap(obj(o), "spec")
	for _, dir := range []string{"ingress", "egress"} {
		for _, rule := range maps(spec, dir) {
			for _, p := range maps(rule, "ports") {
				def(p, "protocol", "TCP")
			}
		}
	}
	if len(getList(spec, "policyTypes")) == 0 {
		types := []any{"Ingress"}
		if len(getList(spec, "egress")) > 0 {
			types = append(types, "Egress")
		}
		spec["policyTypes"] = types
	}
	return nil
}

func defaultStorageClass(_ context.Context, o registry.Object) error {
	def(obj(o), "reclaimPolicy", "Delete")
	def(obj(o), "volumeBindingMode", "Immediate")
	return nil
}

func defaultPriorityClass(_ context.Context, o registry.Object) error {
	def(obj(o), "preemptionPolicy", "PreemptLowerPriority")
	return nil
}

// validateEventsV1 is kube's ValidateEventCreate for an events.k8s.io/v1
// Event (kube validates its internal core Event, so a field is named as
// there: regarding is involvedObject): the legacy rules every Event
// meets (legacyEventErrors), then the strict ones of events.k8s.io: a
// series of at least 2 with a lastObservedTime, an eventTime, a type of
// Normal or Warning, and none of the deprecated core fields. An Event
// with an eventTime and no reportingController nor reportingInstance
// has four causes:
//
//	reportingController: Required value
//	reportingController: Invalid value: "": name part must be non-empty
//	reportingController: Invalid value: "": name part must consist of …
//	reportingInstance: Required value
func validateEventsV1(_ context.Context, o registry.Object) []registry.FieldError {
	m := obj(o)
	errs := legacyEventErrors(m, o.Namespace(), "reportingController")
	errs = append(errs, eventSeriesErrors(m)...)
	if m["eventTime"] == nil {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: "eventTime"})
	}
	if t := getString(m, "type"); t != "Normal" && t != "Warning" {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "type", Value: "", Detail: "has invalid value: " + t})
	}
	for _, f := range []struct{ v1, core string }{{"deprecatedFirstTimestamp", "firstTimestamp"}, {"deprecatedLastTimestamp", "lastTimestamp"}} {
		if m[f.v1] != nil {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: f.core, Value: "", Detail: "needs to be unset"})
		}
	}
	if intAt(m, "deprecatedCount") != 0 {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "count", Value: "", Detail: "needs to be unset"})
	}
	if getString(m, "deprecatedSource", "component") != "" || getString(m, "deprecatedSource", "host") != "" {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "source", Value: "", Detail: "needs to be unset"})
	}
	return errs
}

// validateEventsV1Update is ValidateEventUpdate: the legacy rules, the
// series when it changes, and the fields an Event keeps, named and
// valued as kube's internal core Event has them (a reference or source
// as its Go struct, field names and all: {"Kind":"Deployment",…}).
func validateEventsV1Update(_ context.Context, o, old registry.Object) []registry.FieldError {
	m, was := obj(o), obj(old)
	errs := legacyEventErrors(m, o.Namespace(), "reportingController")
	if !equal(m["series"], was["series"]) {
		errs = append(errs, eventSeriesErrors(m)...)
	}
	for _, f := range []struct {
		v1, core string
		value    func(map[string]any) any
	}{
		{"regarding", "involvedObject", func(m map[string]any) any { return coreObjectReference(getMap(m, "regarding")) }},
		{"reason", "reason", nil}, {"note", "message", nil},
		{"deprecatedSource", "source", func(m map[string]any) any {
			return struct{ Component, Host string }{getString(m, "deprecatedSource", "component"), getString(m, "deprecatedSource", "host")}
		}},
		{"deprecatedFirstTimestamp", "firstTimestamp", nil}, {"deprecatedLastTimestamp", "lastTimestamp", nil},
		{"deprecatedCount", "count", func(m map[string]any) any { return intAt(m, "deprecatedCount") }},
		{"type", "type", nil}, {"eventTime", "eventTime", nil}, {"action", "action", nil},
		{"related", "related", func(m map[string]any) any {
			if r := getMap(m, "related"); r != nil {
				return coreObjectReference(r)
			}
			return nil
		}},
		{"reportingController", "reportingController", nil}, {"reportingInstance", "reportingInstance", nil},
	} {
		value := f.value
		if value == nil {
			value = func(m map[string]any) any {
				if v, ok := m[f.v1]; ok && v != nil {
					return v
				}
				if f.v1 == "eventTime" || strings.Contains(f.v1, "Timestamp") {
					return nil // a zero time is null
				}
				return "" // a string left out is ""
			}
		}
		if v := value(m); !equal(v, value(was)) {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: f.core, Value: v, Detail: "field is immutable"})
		}
	}
	return errs
}

// coreObjectReference is kube's internal core.ObjectReference, whose
// JSON has Go's field names.
func coreObjectReference(r map[string]any) any {
	return struct{ Kind, Namespace, Name, UID, APIVersion, ResourceVersion, FieldPath string }{
		getString(r, "kind"), getString(r, "namespace"), getString(r, "name"), getString(r, "uid"),
		getString(r, "apiVersion"), getString(r, "resourceVersion"), getString(r, "fieldPath")}
}

// Kube's limits of an Event's strings.
const (
	eventNameLimit = 128  // reportingInstance, action, reason
	eventNoteLimit = 1024 // note (core's message)
)

// legacyEventErrors is kube's legacyValidateEvent of an events.k8s.io
// Event m in namespace ns: without an eventTime, what it regards is in
// its namespace (or, with no namespace, the event is in "" or default);
// with one, it names a reporting controller (a qualified name), a
// reporting instance, an action and a reason, within kube's lengths.
// reportingController is that field's name in the request's version
// (core's is reportingComponent).
func legacyEventErrors(m map[string]any, ns, reportingController string) []registry.FieldError {
	var errs []registry.FieldError
	rns := getString(m, "regarding", "namespace")
	mismatch := registry.FieldError{Type: validation.TypeInvalid, Field: "involvedObject.namespace", Value: rns, Detail: "does not match event.namespace"}
	if m["eventTime"] == nil {
		if (rns == "" && ns != "" && ns != "default") || (rns != "" && rns != ns) {
			errs = append(errs, mismatch)
		}
		return errs
	}
	if rns == "" && ns != "default" && ns != "kube-system" {
		errs = append(errs, mismatch)
	}
	rc := getString(m, "reportingController")
	if rc == "" {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: reportingController})
	}
	errs = appendInvalid(errs, reportingController, rc, validation.IsQualifiedName(rc))
	for _, f := range []struct {
		v1, core string
		limit    int
		required bool
	}{{"reportingInstance", "reportingInstance", eventNameLimit, true}, {"action", "action", eventNameLimit, true},
		{"reason", "reason", eventNameLimit, true}, {"note", "message", eventNoteLimit, false}} {
		v := getString(m, f.v1)
		if v == "" && f.required {
			errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: f.core})
		}
		if len(v) > f.limit {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: f.core, Value: "", Detail: fmt.Sprintf("can have at most %d characters", f.limit)})
		}
	}
	return errs
}

// eventSeriesErrors is validateV1EventSeries.
func eventSeriesErrors(m map[string]any) []registry.FieldError {
	series := getMap(m, "series")
	if series == nil {
		return nil
	}
	var errs []registry.FieldError
	if intAt(series, "count") < 2 {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "series.count", Value: "", Detail: "should be at least 2"})
	}
	if series["lastObservedTime"] == nil {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: "series.lastObservedTime"})
	}
	return errs
}

// prepareEventsV1Create and prepareEventsV1Update refuse an invalid
// events.k8s.io Event with kube's 422: kube serves the kind from the
// core group's internal Event, so its error names the kind without a
// group (`Event "e" is invalid`).
func prepareEventsV1Create(ctx context.Context, o registry.Object) error {
	return eventInvalid(o, validateEventsV1(ctx, o))
}

func prepareEventsV1Update(ctx context.Context, o, old registry.Object) error {
	return eventInvalid(o, validateEventsV1Update(ctx, o, old))
}

func eventInvalid(o registry.Object, errs []registry.FieldError) error {
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, 0, len(errs))
	causes := make([]registry.StatusCause, len(errs))
	for i, e := range errs {
		if m := e.Error(); !slices.Contains(msgs, m) { // kube's aggregate: once each
			msgs = append(msgs, m)
		}
		causes[i] = registry.StatusCause{Type: e.Type, Message: e.ErrorBody(), Field: e.Field}
	}
	msg := msgs[0]
	if len(msgs) > 1 {
		msg = "[" + strings.Join(msgs, ", ") + "]"
	}
	se := statusError(422, "Invalid", fmt.Sprintf("Event %q is invalid: %s", o.Name(), msg))
	se.Status.Details = &registry.StatusDetails{Name: o.Name(), Kind: "Event", Causes: causes}
	return se
}

// defaultEventsV1 writes the times Go's JSON writes for an events.k8s.io
// Event's non-pointer metav1.Time fields: null.
func defaultEventsV1(_ context.Context, o registry.Object) error {
	for _, f := range []string{"deprecatedFirstTimestamp", "deprecatedLastTimestamp"} {
		def(obj(o), f, nil)
	}
	return nil
}

// prepareLease drops the fields of kube's CoordinatedLeaderElection
// (alpha, off by default), as kube's strategy does (after its field
// manager has recorded them).
func prepareLease(_ context.Context, o registry.Object) error {
	spec := getMap(obj(o), "spec")
	delete(spec, "strategy")
	delete(spec, "preferredHolder")
	return nil
}

// validateEndpoints is kube's validateEndpointSubsets: each subset has
// addresses, each address an IP (the legacy parse, then
// ValidateEndpointIP's ranges), each port a number in range.
func validateEndpoints(_ context.Context, o registry.Object) fieldErrors {
	var errs fieldErrors
	for i, s := range maps(obj(o), "subsets") {
		path := fmt.Sprintf("subsets[%d]", i)
		if len(getList(s, "addresses")) == 0 && len(getList(s, "notReadyAddresses")) == 0 {
			errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: path, Detail: "must specify `addresses` or `notReadyAddresses`"})
		}
		for _, list := range []string{"addresses", "notReadyAddresses"} {
			for j, a := range maps(s, list) {
				errs = append(errs, endpointIP(getString(a, "ip"), fmt.Sprintf("%s.%s[%d].ip", path, list, j))...)
			}
		}
		for j, p := range maps(s, "ports") {
			if n := intAt(p, "port"); n < 1 || n > 65535 {
				errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: fmt.Sprintf("%s.ports[%d].port", path, j), Value: get(p, "port"), Detail: portRange})
			}
		}
	}
	return errs
}

// endpointIP is kube's IsValidIPForLegacyField (strict, as the
// StrictIPCIDRValidation gate of 1.37 has it) then ValidateEndpointIP.
func endpointIP(s, field string) fieldErrors {
	invalid := func(detail string) registry.FieldError {
		return registry.FieldError{Type: validation.TypeInvalid, Field: field, Value: s, Detail: detail}
	}
	ip, err := netip.ParseAddr(s)
	if err != nil {
		if sloppyIPv4(s) {
			return fieldErrors{invalid("must not have leading 0s")}
		}
		return fieldErrors{invalid(invalidIP), invalid("must be a valid IP address")}
	}
	var errs fieldErrors
	if ip.Is4In6() {
		errs = append(errs, invalid("must not be an IPv4-mapped IPv6 address"))
		ip = ip.Unmap()
	}
	if ip.IsUnspecified() {
		errs = append(errs, invalid(fmt.Sprintf("may not be unspecified (%v)", s)))
	}
	if ip.IsLoopback() {
		errs = append(errs, invalid("may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if ip.IsLinkLocalUnicast() {
		errs = append(errs, invalid("may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if ip.IsLinkLocalMulticast() {
		errs = append(errs, invalid("may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return errs
}

// sloppyIPv4 reports an IPv4 address with leading zeros in an octet
// ("010.1.2.3"), which kube's legacy parse reads and its strict one
// refuses.
func sloppyIPv4(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return false
	}
	for i, p := range parts {
		t := strings.TrimLeft(p, "0")
		if t == "" {
			t = "0"
		}
		parts[i] = t
	}
	_, err := netip.ParseAddr(strings.Join(parts, "."))
	return err == nil
}

// validateLimitRange is the part of kube's ValidateLimitRange that
// compares an item's quantities, per resource (in name order): min ≤
// defaultRequest ≤ default ≤ max, min ≤ max, maxLimitRequestRatio ≥ 1.
// The value an error shows is the quantity kube names (for "default
// above max", max's).
func validateLimitRange(_ context.Context, o registry.Object) fieldErrors {
	var errs fieldErrors
	for i, item := range maps(obj(o), "spec", "limits") {
		path := fmt.Sprintf("spec.limits[%d]", i)
		kinds := []string{"min", "max", "default", "defaultRequest", "maxLimitRequestRatio"}
		q := map[string]map[string]string{}
		var names []string
		for _, k := range kinds {
			q[k] = map[string]string{}
			for name, v := range getMap(item, k) {
				s, ok := v.(string)
				if c, canon := canonicalQuantity(fmt.Sprint(v)); canon {
					s, ok = c, true
				}
				if !ok {
					continue
				}
				q[k][name] = s
				if !slices.Contains(names, name) {
					names = append(names, name)
				}
			}
		}
		sort.Strings(names)
		cmp := func(a, b string) int {
			x, _ := quantityValue(a)
			y, _ := quantityValue(b)
			if x == nil || y == nil {
				return 0
			}
			return x.Cmp(y)
		}
		for _, name := range names {
			min, hasMin := q["min"][name]
			max, hasMax := q["max"][name]
			dflt, hasDefault := q["default"][name]
			req, hasReq := q["defaultRequest"][name]
			ratio, hasRatio := q["maxLimitRequestRatio"][name]
			add := func(k, value, detail string) {
				errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path + "." + k + "[" + name + "]", Value: value, Detail: detail})
			}
			if hasMin && hasMax && cmp(min, max) > 0 {
				add("min", min, fmt.Sprintf("min value %s is greater than max value %s", min, max))
			}
			if hasReq && hasMin && cmp(min, req) > 0 {
				add("defaultRequest", req, fmt.Sprintf("min value %s is greater than default request value %s", min, req))
			}
			if hasReq && hasMax && cmp(req, max) > 0 {
				add("defaultRequest", req, fmt.Sprintf("default request value %s is greater than max value %s", req, max))
			}
			if hasReq && hasDefault && cmp(req, dflt) > 0 {
				add("defaultRequest", req, fmt.Sprintf("default request value %s is greater than default limit value %s", req, dflt))
			}
			if hasDefault && hasMin && cmp(min, dflt) > 0 {
				add("default", min, fmt.Sprintf("min value %s is greater than default value %s", min, dflt))
			}
			if hasDefault && hasMax && cmp(dflt, max) > 0 {
				add("default", max, fmt.Sprintf("default value %s is greater than max value %s", dflt, max))
			}
			if hasRatio && cmp(ratio, "1") < 0 {
				add("maxLimitRequestRatio", ratio, fmt.Sprintf("ratio %s is less than 1", ratio))
			}
		}
	}
	return errs
}

// pvcImmutable is kube's message for a claim update that changes its
// spec beyond what may change; kube follows it with a diff of its
// internal PersistentVolumeClaimSpec (pvcSpecUpdateDiff).
const pvcImmutable = "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"

// validatePVCUpdate is kube's ValidatePersistentVolumeClaimUpdate beyond
// the create checks: the spec may change only in volumeName (once), a
// storageClassName set where there was none, and, for a bound claim,
// resources.requests.storage and volumeAttributesClassName
// (pvcSpecsReconciled).
func validatePVCUpdate(ctx context.Context, o, old registry.Object) fieldErrors {
	errs := validatePVC(ctx, o)
	if oldSpec, spec := pvcSpecsReconciled(obj(old), obj(o)); !equal(spec, oldSpec) {
		errs = append(errs, registry.FieldError{Type: validation.TypeForbidden, Field: "spec",
			Detail: pvcImmutable + goDiff("core.PersistentVolumeClaimSpec", oldSpec, spec)})
	}
	return errs
}
