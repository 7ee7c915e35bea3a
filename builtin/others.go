package builtin

import (
	"context"
	"fmt"
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

func preparePersistentVolumeCreate(_ context.Context, o registry.Object) error {
	status := ensureMap(obj(o), "status")
	status["phase"] = "Pending"
	status["lastPhaseTransitionTime"] = time.Now().UTC().Format(time.RFC3339)
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
	return nil
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

// validateEventsV1 is kube's rule for events.k8s.io Events: what they
// regard is in their namespace (reported at the internal field name, as
// kube does), an eventTime, and a type of Normal or Warning (kube's
// message names the empty value).
func validateEventsV1(_ context.Context, o registry.Object) []registry.FieldError {
	var errs []registry.FieldError
	m := obj(o)
	if ns := getString(m, "regarding", "namespace"); ns != o.Namespace() {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "involvedObject.namespace", Value: ns, Detail: "does not match event.namespace"})
	}
	if m["eventTime"] == nil {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: "eventTime"})
	}
	if t := getString(m, "type"); t != "Normal" && t != "Warning" {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "type", Value: "", Detail: "has invalid value: " + t})
	}
	return errs
}

// prepareEventsV1 refuses an invalid events.k8s.io Event with kube's
// 422: kube serves the kind from the core group's internal Event, so its
// error names the kind without a group (`Event "e" is invalid`).
func prepareEventsV1(ctx context.Context, o registry.Object) error {
	errs := validateEventsV1(ctx, o)
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	causes := make([]registry.StatusCause, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
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
