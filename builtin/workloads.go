package builtin

import (
	"context"
	"encoding/json"
	"math"

	"github.com/kapi-dev/kapi/internal/validation"
	"github.com/kapi-dev/kapi/registry"
	"github.com/kapi-dev/kapi/registry/request"
)

// The workloads (apps/v1, batch/v1 and ReplicationControllers): kube's
// defaults (pkg/apis/apps/v1/defaults.go, batch/v1/defaults.go) and the
// strategies' rules controllers meet: the selector is required, must match
// the template's labels and may not change (apps/v1), a Job generates its
// selector and labels from its uid unless manualSelector is set, and
// StatefulSet updates may change only some of the spec.

// defaultConditionTimes writes the null that Go's JSON writes for a
// condition's unset non-pointer metav1.Time fields.
func defaultConditionTimes(o registry.Object, fields ...string) {
	for _, c := range maps(obj(o), "status", "conditions") {
		for _, f := range fields {
			def(c, f, nil)
		}
	}
}

func defaultDeployment(_ context.Context, o registry.Object) error {
	defaultConditionTimes(o, "lastUpdateTime", "lastTransitionTime")
	spec := ensureMap(obj(o), "spec")
	def(spec, "replicas", num(1))
	st := ensureMap(spec, "strategy")
	def(st, "type", "RollingUpdate")
	if st["type"] == "RollingUpdate" {
		ru := ensureMap(st, "rollingUpdate")
		def(ru, "maxUnavailable", "25%")
		def(ru, "maxSurge", "25%")
	}
	def(spec, "revisionHistoryLimit", num(10))
	def(spec, "progressDeadlineSeconds", num(600))
	defaultPodSpec(getMap(spec, "template", "spec"))
	return nil
}

func defaultReplicaSet(_ context.Context, o registry.Object) error {
	spec := ensureMap(obj(o), "spec")
	def(spec, "replicas", num(1))
	defaultPodSpec(getMap(spec, "template", "spec"))
	return nil
}

func defaultStatefulSet(_ context.Context, o registry.Object) error {
	spec := ensureMap(obj(o), "spec")
	def(spec, "replicas", num(1))
	def(spec, "podManagementPolicy", "OrderedReady")
	us := ensureMap(spec, "updateStrategy")
	def(us, "type", "RollingUpdate")
	if us["type"] == "RollingUpdate" {
		ru := ensureMap(us, "rollingUpdate")
		def(ru, "partition", num(0))
		def(ru, "maxUnavailable", num(1))
	}
	def(spec, "revisionHistoryLimit", num(10))
	// Each claim template gets a PersistentVolumeClaim's defaults
	// (SetObjectDefaults_StatefulSet), and the apiVersion and kind kube's
	// conversion from its internal StatefulSet writes.
	for _, t := range maps(spec, "volumeClaimTemplates") {
		t["apiVersion"], t["kind"] = "v1", "PersistentVolumeClaim"
		def(ensureMap(t, "spec"), "volumeMode", "Filesystem")
		def(ensureMap(t, "status"), "phase", "Pending")
	}
	pr := ensureMap(spec, "persistentVolumeClaimRetentionPolicy")
	def(pr, "whenDeleted", "Retain")
	def(pr, "whenScaled", "Retain")
	defaultPodSpec(getMap(spec, "template", "spec"))
	return nil
}

// prepareDaemonSetCreate starts the template generation annotation kube's
// strategy keeps (deprecated.daemonset.template.generation). kube writes it
// when it converts the request's DaemonSet, before its field manager
// records the create: defaultDaemonSet sets it too, so the creator owns
// it.
func prepareDaemonSetCreate(_ context.Context, o registry.Object) error {
	ensureMap(obj(o), "metadata", "annotations")[templateGeneration] = "1"
	return nil
}

// prepareDaemonSetUpdate bumps it when the template changes.
func prepareDaemonSetUpdate(_ context.Context, o, old registry.Object) error {
	g := getString(obj(old), "metadata", "annotations", templateGeneration)
	if !equal(get(obj(o), "spec", "template"), get(obj(old), "spec", "template")) {
		n, _ := json.Number(g).Int64()
		g = num(n + 1).String()
	}
	if g != "" {
		ensureMap(obj(o), "metadata", "annotations")[templateGeneration] = g
	}
	return nil
}

const templateGeneration = "deprecated.daemonset.template.generation"

func defaultDaemonSet(_ context.Context, o registry.Object) error {
	// See prepareDaemonSetCreate; an update keeps the stored generation
	// (prepareDaemonSetUpdate).
	def(ensureMap(obj(o), "metadata", "annotations"), templateGeneration, "1")
	spec := ensureMap(obj(o), "spec")
	us := ensureMap(spec, "updateStrategy")
	def(us, "type", "RollingUpdate")
	if us["type"] == "RollingUpdate" {
		ru := ensureMap(us, "rollingUpdate")
		def(ru, "maxUnavailable", num(1))
		def(ru, "maxSurge", num(0))
	}
	def(spec, "revisionHistoryLimit", num(10))
	defaultPodSpec(getMap(spec, "template", "spec"))
	return nil
}

// defaultReplicationController is SetDefaults_ReplicationController: the
// selector and labels default to the template's labels.
func defaultReplicationController(_ context.Context, o registry.Object) error {
	spec := ensureMap(obj(o), "spec")
	if labels := getMap(spec, "template", "metadata", "labels"); len(labels) > 0 {
		if len(getMap(spec, "selector")) == 0 {
			spec["selector"] = clone(labels)
		}
		if len(getMap(obj(o), "metadata", "labels")) == 0 {
			o.Meta()["labels"] = clone(labels)
		}
	}
	def(spec, "replicas", num(1))
	defaultPodSpec(getMap(spec, "template", "spec"))
	return nil
}

func defaultJobSpec(spec map[string]any) {
	if spec == nil {
		return
	}
	if spec["completions"] == nil && spec["parallelism"] == nil {
		spec["completions"] = num(1)
		spec["parallelism"] = num(1)
	}
	def(spec, "parallelism", num(1))
	if spec["backoffLimitPerIndex"] != nil {
		def(spec, "backoffLimit", num(math.MaxInt32))
	}
	def(spec, "backoffLimit", num(6))
	def(spec, "completionMode", "NonIndexed")
	def(spec, "suspend", false)
	if spec["podFailurePolicy"] != nil {
		def(spec, "podReplacementPolicy", "Failed")
	} else {
		def(spec, "podReplacementPolicy", "TerminatingOrFailed")
	}
	defaultPodSpec(getMap(spec, "template", "spec"))
}

// defaultJob is SetDefaults_Job: the job's labels default to its
// template's, and manualSelector to false; a condition's unset times are
// the null Go's JSON writes for them.
func defaultJob(_ context.Context, o registry.Object) error {
	defaultConditionTimes(o, "lastProbeTime", "lastTransitionTime")
	spec := ensureMap(obj(o), "spec")
	if l := getMap(spec, "template", "metadata", "labels"); len(l) > 0 && len(getMap(obj(o), "metadata", "labels")) == 0 {
		o.Meta()["labels"] = clone(l)
	}
	defaultJobSpec(spec)
	def(spec, "manualSelector", false)
	return nil
}

func defaultCronJob(_ context.Context, o registry.Object) error {
	spec := ensureMap(obj(o), "spec")
	def(spec, "concurrencyPolicy", "Allow")
	def(spec, "suspend", false)
	def(spec, "successfulJobsHistoryLimit", num(3))
	def(spec, "failedJobsHistoryLimit", num(1))
	defaultPodSpec(getMap(spec, "jobTemplate", "spec", "template", "spec"))
	return nil
}

// jobOrphanWarning is what kube says of a batch/v1 Job deleted without
// a propagation policy: its pods stay (kube's Job strategy's default
// garbage collection policy is OrphanDependents in batch/v1).
const jobOrphanWarning = "child pods are preserved by default when jobs are deleted; " +
	"set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning"

// Job labels kube's strategy puts on a job's pod template and selects by.
const (
	jobUIDLabel       = "batch.kubernetes.io/controller-uid"
	jobLegacyUIDLabel = "controller-uid"
	jobNameLabel      = "batch.kubernetes.io/job-name"
	jobLegacyName     = "job-name"
)

// prepareJobCreate generates the selector and the template's labels from
// the job's uid, unless spec.manualSelector is true (kube's
// generateSelector), and starts the status empty.
func prepareJobCreate(_ context.Context, o registry.Object) error {
	spec := ensureMap(obj(o), "spec")
	if m, _ := spec["manualSelector"].(bool); !m {
		uid, name := o.UID(), o.Name()
		labels := ensureMap(spec, "template", "metadata", "labels")
		def(labels, jobLegacyUIDLabel, uid)
		def(labels, jobUIDLabel, uid)
		def(labels, jobLegacyName, name)
		def(labels, jobNameLabel, name)
		// kube's generateSelector: the uid label is added to a selector
		// the user set too (which validation then refuses).
		sel := ensureMap(spec, "selector")
		def(ensureMap(sel, "matchLabels"), jobUIDLabel, uid)
	}
	if len(getMap(obj(o), "metadata", "labels")) == 0 {
		if l := getMap(spec, "template", "metadata", "labels"); len(l) > 0 {
			o.Meta()["labels"] = clone(l)
		}
	}
	return nil
}

// validateSelector checks that spec.selector exists (required) and
// selects the template's labels.
func validateSelector(spec map[string]any, required bool) []registry.FieldError {
	sel := getMap(spec, "selector")
	labels := stringMap(getMap(spec, "template", "metadata", "labels"))
	if sel == nil {
		if required {
			// kube's nil selector selects nothing: the template's labels
			// do not match it either.
			return []registry.FieldError{{Type: validation.TypeRequired, Field: "spec.selector"},
				{Type: validation.TypeInvalid, Field: "spec.template.metadata.labels", Value: get(spec, "template", "metadata", "labels"), Detail: "`selector` does not match template `labels`"}}
		}
		return nil
	}
	if len(getMap(sel, "matchLabels")) == 0 && len(getList(sel, "matchExpressions")) == 0 {
		return []registry.FieldError{{Type: validation.TypeInvalid, Field: "spec.selector", Value: sel, Detail: "empty selector is invalid for deployment"}}
	}
	if !selects(sel, labels) {
		return []registry.FieldError{{Type: validation.TypeInvalid, Field: "spec.template.metadata.labels", Value: labels, Detail: "`selector` does not match template `labels`"}}
	}
	return nil
}

// selects reports whether a LabelSelector matches labels.
func selects(sel map[string]any, labels map[string]string) bool {
	for k, v := range stringMap(getMap(sel, "matchLabels")) {
		if labels[k] != v {
			return false
		}
	}
	for _, e := range maps(sel, "matchExpressions") {
		key, op := getString(e, "key"), getString(e, "operator")
		val, has := labels[key]
		in := false
		for _, x := range getList(e, "values") {
			if x == val {
				in = true
			}
		}
		switch op {
		case "In":
			if !has || !in {
				return false
			}
		case "NotIn":
			if has && in {
				return false
			}
		case "Exists":
			if !has {
				return false
			}
		case "DoesNotExist":
			if has {
				return false
			}
		}
	}
	return true
}

// validateWorkload is the create validation of the apps/v1 workloads.
func validateWorkload(_ context.Context, o registry.Object) []registry.FieldError {
	spec := getMap(obj(o), "spec")
	errs := validateSelector(spec, true)
	errs = append(errs, nonNegative(spec, "spec.replicas", "replicas")...)
	errs = append(errs, validateTemplate(spec)...)
	return append(errs, validatePodSpec(getMap(spec, "template", "spec"), "spec.template.spec")...)
}

// validateDeployment is validateWorkload with the deployment's strategy.
func validateDeployment(_ context.Context, o registry.Object) []registry.FieldError {
	spec := getMap(obj(o), "spec")
	errs := validateSelector(spec, true)
	errs = append(errs, validateDeploymentSpec(spec)...)
	return append(errs, validatePodSpec(getMap(spec, "template", "spec"), "spec.template.spec")...)
}

// validateDeploymentUpdate is ValidateDeploymentUpdate, and on the
// status subresource ValidateDeploymentStatusUpdate alone (kube's status
// strategy validates the status, not the spec it keeps).
func validateDeploymentUpdate(ctx context.Context, o, old registry.Object) []registry.FieldError {
	if statusWrite(ctx) {
		return validateDeploymentStatusUpdate(o, old)
	}
	return append(validateDeployment(ctx, o), immutable(o, old, "spec.selector", "spec", "selector")...)
}

// statusWrite reports whether the request writes the status subresource.
func statusWrite(ctx context.Context) bool {
	info, ok := request.InfoFrom(ctx)
	return ok && info.Subresource == "status"
}

// validateDeploymentStatusUpdate is ValidateDeploymentStatusUpdate: the
// counts are not negative, none of the replica counts exceeds
// status.replicas, availableReplicas not readyReplicas, and the
// collisionCount never goes down. A status of
//
//	{replicas: -1, readyReplicas: 1, availableReplicas: 1, updatedReplicas: 1}
//
// has four causes: replicas negative, and the three others greater than
// it.
func validateDeploymentStatusUpdate(o, old registry.Object) []registry.FieldError {
	st := getMap(obj(o), "status")
	var errs []registry.FieldError
	for _, f := range []string{"observedGeneration", "replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
		"unavailableReplicas", "terminatingReplicas", "collisionCount"} {
		errs = append(errs, nonNegative(st, "status."+f, f)...)
	}
	replicas, ready := intAt(st, "replicas"), intAt(st, "readyReplicas")
	const msg = "cannot be greater than status.replicas"
	for _, f := range []string{"updatedReplicas", "readyReplicas", "availableReplicas"} {
		if intAt(st, f) > replicas {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "status." + f, Value: intAt(st, f), Detail: msg})
		}
	}
	if a := intAt(st, "availableReplicas"); a > ready {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "status.availableReplicas", Value: a, Detail: "cannot be greater than readyReplicas"})
	}
	if was, ok := get(obj(old), "status", "collisionCount").(json.Number); ok {
		n, _ := was.Int64()
		if now := intAt(st, "collisionCount"); now < n {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "status.collisionCount", Value: now, Detail: "cannot be decremented"})
		}
	}
	return errs
}

// validateWorkloadUpdate adds the immutable selector of apps/v1.
func validateWorkloadUpdate(ctx context.Context, o, old registry.Object) []registry.FieldError {
	errs := validateWorkload(ctx, o)
	return append(errs, immutable(o, old, "spec.selector", "spec", "selector")...)
}

// statefulSetImmutable are the spec fields a StatefulSet update may not
// change (kube's ValidateStatefulSetUpdate; the selector is checked with
// the other workloads').
var statefulSetImmutable = []string{"serviceName", "podManagementPolicy"}

func validateStatefulSetUpdate(ctx context.Context, o, old registry.Object) []registry.FieldError {
	errs := validateWorkloadUpdate(ctx, o, old)
	errs = append(errs, immutableGo(o, old, "spec.volumeClaimTemplates", "[]core.PersistentVolumeClaim", "spec", "volumeClaimTemplates")...)
	for _, f := range statefulSetImmutable {
		errs = append(errs, immutable(o, old, "spec."+f, "spec", f)...)
	}
	return errs
}

func validateReplicationController(_ context.Context, o registry.Object) []registry.FieldError {
	spec := getMap(obj(o), "spec")
	sel := stringMap(getMap(spec, "selector"))
	labels := stringMap(getMap(spec, "template", "metadata", "labels"))
	for k, v := range sel {
		if labels[k] != v {
			return []registry.FieldError{{Type: validation.TypeInvalid, Field: "spec.template.metadata.labels", Value: labels, Detail: "`selector` does not match template `labels`"}}
		}
	}
	if len(sel) == 0 {
		return []registry.FieldError{{Type: validation.TypeRequired, Field: "spec.selector"}}
	}
	errs := append(nonNegative(spec, "spec.replicas", "replicas"), validateTemplate(spec)...)
	return append(errs, validatePodSpec(getMap(spec, "template", "spec"), "spec.template.spec")...)
}

func validateJob(_ context.Context, o registry.Object) []registry.FieldError {
	spec := getMap(obj(o), "spec")
	errs := validateSelector(spec, true)
	errs = append(errs, validateJobSpec(spec)...)
	tspec := getMap(spec, "template", "spec")
	if rp := getString(tspec, "restartPolicy"); rp != "OnFailure" && rp != "Never" {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: "spec.template.spec.restartPolicy", Detail: `valid values: "OnFailure", "Never"`})
	}
	return append(errs, validatePodSpec(tspec, "spec.template.spec")...)
}

// validateJobUpdate keeps the selector, and the template of a job that is
// not suspended, as kube's ValidateJobSpecUpdate does; on the status
// subresource it is kube's job status strategy's validation alone
// (validateJobStatusUpdate: the spec is kept, the status checked).
func validateJobUpdate(ctx context.Context, o, old registry.Object) []registry.FieldError {
	if statusWrite(ctx) {
		return validateJobStatusUpdate(o, old)
	}
	errs := validateJob(ctx, o)
	errs = append(errs, immutable(o, old, "spec.selector", "spec", "selector")...)
	suspended, _ := get(obj(old), "spec", "suspend").(bool)
	if !suspended && !equal(get(obj(o), "spec", "template"), get(obj(old), "spec", "template")) {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "spec.template", Value: goValue("core.PodTemplateSpec", get(obj(o), "spec", "template")), Detail: "field is immutable"})
	}
	if getString(obj(o), "spec", "completionMode") != "Indexed" {
		errs = append(errs, immutable(o, old, "spec.completions", "spec", "completions")...)
	}
	if !equal(get(obj(o), "spec", "completionMode"), get(obj(old), "spec", "completionMode")) {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "spec.completionMode", Value: get(obj(o), "spec", "completionMode"), Detail: "field is immutable"})
	}
	return errs
}
