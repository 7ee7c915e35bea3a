package builtin

import (
	"context"
	"slices"

	"github.com/kapi-dev/kapi/registry"
)

// behaviours holds what the kinds' strategies share (the Services'
// allocators) and gives each kind its strategy, columns and generation.
type behaviours struct {
	services *services
	tokens   *Tokens
	reg      *registry.Registry // set by Register, for the subresources' writes
}

func newBehaviours(opts Options) (*behaviours, error) {
	s, err := newServices(opts.ServiceCIDR)
	if err != nil {
		return nil, err
	}
	return &behaviours{services: s, tokens: opts.Tokens}, nil
}

// generation lists the kinds whose writes keep metadata.generation, as
// kube's strategies do (pkg/registry/*/strategy.go; Pods too since
// PodObservedGenerationTracking).
var generation = map[string]bool{
	"pods": true, "podtemplates": true, "replicationcontrollers": true,
	"deployments": true, "statefulsets": true, "replicasets": true, "daemonsets": true,
	"jobs": true, "cronjobs": true, "horizontalpodautoscalers": true,
	"ingresses": true, "ingressclasses": true, "networkpolicies": true, "endpointslices": true,
	"poddisruptionbudgets": true, "priorityclasses": true,
}

// returnDeleted lists the kinds whose DELETE answers with the deleted
// object (kube's registries with ReturnDeletedObject).
var returnDeleted = map[string]bool{
	"/pods": true, "/services": true, "/serviceaccounts": true, "/persistentvolumes": true, "/persistentvolumeclaims": true,
	"/resourcequotas": true, "/podtemplates": true, "storage.k8s.io/storageclasses": true,
	"storage.k8s.io/csidrivers": true, "storage.k8s.io/csinodes": true, "storage.k8s.io/volumeattachments": true,
	"storage.k8s.io/volumeattributesclasses": true,
}

// conditionalUpdate lists the kinds whose PUT must name a
// resourceVersion (kube's strategies with AllowUnconditionalUpdate
// false): without one, 422.
var conditionalUpdate = map[string]bool{
	"storage.k8s.io/csidrivers": true, "storage.k8s.io/csinodes": true, "storage.k8s.io/csistoragecapacities": true,
	"storage.k8s.io/volumeattachments": true, "node.k8s.io/runtimeclasses": true,
}

// selectable are the field selectors kube's kinds support beyond
// metadata.name and metadata.namespace (their GetAttrs).
var selectable = map[string][]string{
	"/pods": {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
		"status.phase", "status.podIP", "status.nominatedNodeName"},
	"/events": {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
		"involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason", "reportingComponent", "type"},
	"events.k8s.io/events": {"regarding.kind", "regarding.namespace", "regarding.name", "regarding.uid",
		"regarding.apiVersion", "regarding.resourceVersion", "regarding.fieldPath", "reason", "reportingController", "type"},
	"/secrets":                {"type"},
	"/services":               {"spec.clusterIP", "spec.type"},
	"/replicationcontrollers": {"status.replicas"},
	"apps/replicasets":        {"status.replicas"},
	"batch/jobs":              {"status.successful"},
	"certificates.k8s.io/certificatesigningrequests": {"spec.signerName"},
}

func (b *behaviours) apply(k *kind, res *registry.Resource) {
	res.Generation = generation[k.Plural]
	res.RequireResourceVersion = conditionalUpdate[k.Group+"/"+k.Plural]
	// Copies: Register keeps its own state in a resource's columns, and
	// registries may be built concurrently.
	res.SelectableFields = slices.Clone(selectable[k.Group+"/"+k.Plural])
	res.Columns = slices.Clone(columns[k.Group+"/"+k.Plural])
	if c, ok := storageColumns[k.Group+"/"+k.Plural]; ok {
		res.Columns = slices.Clone(c)
	}
	s := &res.Strategy
	s.ReturnDeletedObject = returnDeleted[k.Group+"/"+k.Plural]
	switch k.Group + "/" + k.Plural {
	case "/pods":
		res.Subresources = map[string]registry.SubresourceHandler{"binding": b.bind, "eviction": b.evict}
		s.Default = defaultPod
		s.PrepareForCreate = preparePodCreate
		s.PrepareForUpdate = preparePodUpdate
		s.WarningsOnCreate = podWarnings
		s.GracePeriod = podGracePeriod
		s.ValidateCreate = validatePod
		s.ValidateUpdate = func(ctx context.Context, o, old registry.Object) []registry.FieldError {
			return append(validatePod(ctx, o), validatePodUpdate(ctx, o, old)...)
		}
	case "/podtemplates":
		s.Default = func(_ context.Context, o registry.Object) error {
			defaultPodSpec(getMap(obj(o), "template", "spec"))
			return nil
		}
	case "/services":
		s.Default = defaultService
		s.PrepareForCreate = b.services.prepareCreate
		s.PrepareForUpdate = b.services.prepareUpdate
		s.ValidateCreate = validateService
		s.ValidateUpdate = func(ctx context.Context, o, old registry.Object) []registry.FieldError {
			return append(validateService(ctx, o), b.services.validateUpdate(ctx, o, old)...)
		}
		s.AfterDelete = b.services.release
	case "/serviceaccounts":
		if b.tokens != nil {
			res.Subresources = map[string]registry.SubresourceHandler{"token": b.token}
		}
	case "/secrets":
		s.Default = defaultSecret
		s.ValidateCreate = validateSecret
		s.ValidateUpdate = validateSecretUpdate
		s.WarningsOnCreate = secretWarnings
		s.WarningsOnUpdate = func(ctx context.Context, o, _ registry.Object) []string { return secretWarnings(ctx, o) }
	case "/replicationcontrollers":
		s.Default = defaultReplicationController
		s.ValidateCreate = validateReplicationController
		s.ValidateUpdate = func(ctx context.Context, o, _ registry.Object) []registry.FieldError {
			return validateReplicationController(ctx, o)
		}
	case "/persistentvolumes":
		s.Default = defaultPersistentVolume
		s.PrepareForCreate = preparePersistentVolumeCreate
	case "/endpoints":
		// kube's deprecation warning, on every response of the kind.
		res.Warnings = []string{"v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"}
		s.Default = defaultEndpoints
	case "/nodes":
		s.PrepareForCreate = prepareNodeCreate
	case "/limitranges":
		s.Default = defaultLimitRange
	case "discovery.k8s.io/endpointslices":
		s.Default = defaultEndpointSlice
	case "networking.k8s.io/networkpolicies":
		s.Default = defaultNetworkPolicy
	case "storage.k8s.io/storageclasses":
		s.Default = defaultStorageClass
	case "scheduling.k8s.io/priorityclasses":
		s.Default = defaultPriorityClass
	// storage.go
	case "storage.k8s.io/csidrivers":
		s.Default = defaultCSIDriver
		s.PrepareForUpdate = prepareCSIDriverUpdate
		s.ValidateCreate, s.ValidateUpdate = validateCSIDriver, validateCSIDriverUpdate
		s.WarningsOnCreate, s.WarningsOnUpdate = csiDriverWarnings, csiDriverUpdateWarnings
	case "storage.k8s.io/csinodes":
		s.Default, s.Canonicalize = defaultCSINode, canonicalizeCSINode
		s.PrepareForUpdate = prepareCSINodeUpdate
		// kube's zero CSINode holds its spec (a struct, required) with
		// null drivers: a create of either sets no field.
		res.TypedZero = registry.Object{"metadata": map[string]any{}, "spec": map[string]any{"drivers": nil}, "status": map[string]any{}}
		s.ValidateCreate, s.ValidateUpdate = validateCSINode, validateCSINodeUpdate
	case "storage.k8s.io/csistoragecapacities":
		s.ValidateCreate, s.ValidateUpdate = validateCSIStorageCapacity, validateCSIStorageCapacityUpdate
		s.WarningsOnCreate = csiStorageCapacityWarnings
		s.WarningsOnUpdate = func(ctx context.Context, o, _ registry.Object) []string { return csiStorageCapacityWarnings(ctx, o) }
	case "storage.k8s.io/volumeattachments":
		s.ValidateCreate, s.ValidateUpdate = validateVolumeAttachment, validateVolumeAttachmentUpdate
	case "storage.k8s.io/volumeattributesclasses":
		s.ValidateCreate, s.ValidateUpdate = validateVolumeAttributesClass, validateVolumeAttributesClassUpdate
	case "node.k8s.io/runtimeclasses":
		s.ValidateCreate, s.ValidateUpdate = validateRuntimeClass, validateRuntimeClassUpdate
		s.WarningsOnCreate = runtimeClassWarnings
		s.WarningsOnUpdate = func(ctx context.Context, o, _ registry.Object) []string { return runtimeClassWarnings(ctx, o) }
	case "certificates.k8s.io/certificatesigningrequests":
		csrStrategy(res, b.reg)
	case "events.k8s.io/events":
		s.Default = defaultEventsV1
		s.PrepareForCreate = prepareEventsV1Create
		s.PrepareForUpdate = prepareEventsV1Update
		// Stored with core's Events, as core v1 Events (eventconvert.go).
		res.StorageGroup, res.StorageVersion, res.Convert = "core", "v1", convertEvent
	case "autoscaling/horizontalpodautoscalers":
		s.ValidateCreate = validateHPA
		s.ValidateUpdate = validateHPAUpdate
		// Stored at autoscaling/v2, as kube stores them (hpaconvert.go).
		res.StorageVersion, res.Convert = "v2", convertHPA
		if k.Version == "v1" {
			s.Default = defaultHPAv1
		} else {
			s.Default = defaultHPAv2
			s.PrepareForCreate = prepareHPAv2Create
		}
	case "/persistentvolumeclaims":
		s.Default = func(_ context.Context, o registry.Object) error {
			def(ensureMap(obj(o), "spec"), "volumeMode", "Filesystem")
			return nil
		}
		s.PrepareForCreate = func(_ context.Context, o registry.Object) error {
			o["status"] = map[string]any{"phase": "Pending"}
			return nil
		}
	case "apps/deployments":
		s.Default = defaultDeployment
		s.ValidateCreate = validateDeployment
		s.ValidateUpdate = validateDeploymentUpdate
	case "apps/replicasets":
		s.Default = defaultReplicaSet
		s.ValidateCreate = validateWorkload
		s.ValidateUpdate = validateWorkloadUpdate
	case "apps/daemonsets":
		s.Default = defaultDaemonSet
		s.ValidateCreate = validateWorkload
		s.ValidateUpdate = validateWorkloadUpdate
	case "apps/statefulsets":
		s.Default = defaultStatefulSet
		s.ValidateCreate = validateWorkload
		s.ValidateUpdate = validateStatefulSetUpdate
	case "batch/jobs":
		s.Default = defaultJob
		s.PrepareForCreate = prepareJobCreate
		s.OrphanByDefault, s.OrphanWarning = true, jobOrphanWarning
		s.ValidateCreate = validateJob
		s.ValidateUpdate = validateJobUpdate
	case "coordination.k8s.io/leases":
		s.PrepareForCreate = prepareLease
		s.PrepareForUpdate = func(ctx context.Context, o, _ registry.Object) error { return prepareLease(ctx, o) }
	case "batch/cronjobs":
		s.Default = defaultCronJob
	case "/events":
		s.Default = defaultEvent
		s.ValidateCreate = validateEvent
		s.ValidateUpdate = func(ctx context.Context, o, _ registry.Object) []registry.FieldError { return validateEvent(ctx, o) }
	}
	if v, ok := validators[k.Group+"/"+k.Plural]; ok {
		s.ValidateCreate = v
		s.ValidateUpdate = func(ctx context.Context, o, _ registry.Object) []registry.FieldError { return v(ctx, o) }
	}
	switch k.Group + "/" + k.Plural {
	case "scheduling.k8s.io/priorityclasses":
		s.ValidateUpdate = validatePriorityClassUpdate
	case "storage.k8s.io/storageclasses":
		s.ValidateUpdate = validateStorageClassUpdate
	case "/persistentvolumeclaims":
		s.ValidateUpdate = validatePVCUpdate
	case "apps/controllerrevisions":
		s.ValidateCreate = validateControllerRevision
		s.ValidateUpdate = validateControllerRevisionUpdate
	case "batch/jobs":
		s.ValidateCreate = func(ctx context.Context, o registry.Object) []registry.FieldError {
			return append(validateJob(ctx, o), validateGeneratedSelector(o)...)
		}
	}
	if k.Plural == "daemonsets" {
		s.PrepareForCreate = prepareDaemonSetCreate
		s.PrepareForUpdate = prepareDaemonSetUpdate
	}
	if hasQuantities(res.Schema) {
		dflt := s.Default
		s.Default = func(ctx context.Context, o registry.Object) error {
			if dflt != nil {
				if err := dflt(ctx, o); err != nil {
					return err
				}
			}
			if _, ok := quants.canonicalize(res.Schema, map[string]any(o)); !ok {
				return statusError(400, "BadRequest", k.Kind+` in version "`+k.Version+`" cannot be handled as a `+k.Kind+
					`: quantities must match the regular expression '`+quantityRegexp+`'`)
			}
			return nil
		}
	}
	if len(res.Subresources) > 0 {
		res.SubresourceKinds = map[string]registry.SubresourceKind{}
		for _, sub := range k.Subresources {
			if _, ok := res.Subresources[sub.Name]; ok {
				res.SubresourceKinds[sub.Name] = registry.SubresourceKind{Group: sub.Group, Version: sub.Version, Kind: sub.Kind, Verbs: sub.Verbs}
			}
		}
	}
	if res.Status {
		// A new object's status starts empty, with the zero values Go's
		// JSON writes for kube's non-pointer fields (the schema's
		// defaults), before the kind's own.
		prepare, st := s.PrepareForCreate, res.Schema.Properties["status"]
		s.PrepareForCreate = func(ctx context.Context, o registry.Object) error {
			status := map[string]any{}
			st.ApplyDefaults(status)
			o["status"] = status
			if prepare != nil {
				return prepare(ctx, o)
			}
			return nil
		}
	}
}

// validators are the kinds' validations that are the same on create and
// update (validation.go).
var validators = map[string]func(context.Context, registry.Object) []registry.FieldError{
	"batch/cronjobs":                    validateCronJob,
	"coordination.k8s.io/leases":        validateLease,
	"policy/poddisruptionbudgets":       validatePDB,
	"networking.k8s.io/ingresses":       validateIngress,
	"networking.k8s.io/networkpolicies": validateNetworkPolicy,
	"networking.k8s.io/ingressclasses":  validateIngressClass,
	"discovery.k8s.io/endpointslices":   validateEndpointSlice,
	"/endpoints":                        validateEndpoints,
	"/persistentvolumeclaims":           validatePVC,
	"/limitranges":                      validateLimitRange,
	"/resourcequotas":                   validateResourceQuota,
	"storage.k8s.io/storageclasses":     validateStorageClass,
	"scheduling.k8s.io/priorityclasses": validatePriorityClass,
}

// defaultEvent writes the times Go's JSON writes for a core/v1 Event's
// non-pointer metav1.Time fields: null.
func defaultEvent(_ context.Context, o registry.Object) error {
	for _, f := range []string{"eventTime", "firstTimestamp", "lastTimestamp"} {
		def(obj(o), f, nil)
	}
	return nil
}

// validateEvent is kube's legacyValidateEvent of a core/v1 Event (the
// only rules kube keeps for the version): its involvedObject is in the
// event's namespace, and one with an eventTime names its reporting
// component and instance, action and reason (others.go, on the
// events.k8s.io form of the Event).
func validateEvent(_ context.Context, o registry.Object) []registry.FieldError {
	m := registry.Object{}
	for k, v := range o {
		m[k] = v
	}
	renameEventFields(m, 1, 0)
	return legacyEventErrors(m, o.Namespace(), "reportingComponent")
}
