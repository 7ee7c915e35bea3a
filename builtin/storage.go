package builtin

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kapi-dev/kapi/internal/validation"
	"github.com/kapi-dev/kapi/registry"
)

// The storage.k8s.io kinds beyond StorageClass (CSIDriver, CSINode,
// CSIStorageCapacity, VolumeAttachment, VolumeAttributesClass) and
// node.k8s.io's RuntimeClass: kube 1.37's defaults
// (pkg/apis/storage/v1/defaults.go), validation
// (pkg/apis/storage/validation, pkg/apis/node/validation) and strategies
// (pkg/registry/storage/*, pkg/registry/node/runtimeclass), with the
// feature gates at their 1.37 defaults (CSIVolumeHealth off, the others
// these kinds read on).
//
// Kube 1.37 validates some fields declaratively (the DeclarativeValidationBeta
// gate is on): a RuntimeClass's handler, a VolumeAttachment's attacher and
// spec. Their errors come after the hand-written ones, and an immutable
// field's names no value. A VolumeAttachment created with an empty attacher
// and no source has, in this order:
//
//	spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName
//	spec.attacher: Required value
//
// and one whose spec changes, `spec: Invalid value: null: field is immutable`
// last.

// defaultCSIDriver is SetDefaults_CSIDriver (SELinuxMountReadWriteOncePod
// and VolumeLimitScaling on).
func defaultCSIDriver(_ context.Context, o registry.Object) error {
	spec := ensureMap(obj(o), "spec")
	def(spec, "attachRequired", true)
	def(spec, "podInfoOnMount", false)
	def(spec, "storageCapacity", false)
	def(spec, "fsGroupPolicy", "ReadWriteOnceWithFSType")
	if len(getList(spec, "volumeLifecycleModes")) == 0 {
		spec["volumeLifecycleModes"] = []any{"Persistent"}
	}
	def(spec, "requiresRepublish", false)
	def(spec, "seLinuxMount", false)
	def(spec, "preventPodSchedulingIfMissing", false)
	return nil
}

// prepareCSIDriverUpdate counts a change of the spec in
// metadata.generation, which kube's strategy starts at none (not 1) on
// create.
func prepareCSIDriverUpdate(_ context.Context, o, old registry.Object) error {
	if !equal(obj(o)["spec"], obj(old)["spec"]) {
		o.Meta()["generation"] = intAt(obj(old), "metadata", "generation") + 1
	}
	return nil
}

// defaultCSINode writes the drivers Go's JSON writes for kube's
// CSINodeSpec (no omitempty) when none are given: null.
func defaultCSINode(_ context.Context, o registry.Object) error {
	def(ensureMap(obj(o), "spec"), "drivers", nil)
	return nil
}

// canonicalizeCSINode stores an empty list of drivers as null, as kube's
// protobuf storage reads it back (the request's [] is in its manager's
// fields: this runs after them).
func canonicalizeCSINode(_ context.Context, o registry.Object) {
	if spec := getMap(obj(o), "spec"); spec != nil && len(getList(spec, "drivers")) == 0 {
		spec["drivers"] = nil
	}
}

// csiTokenWarning is kube's warning for a CSIDriver that asks for tokens
// without saying where they go.
const csiTokenWarning = "spec.serviceAccountTokenInSecrets is unset; if supported by this CSI driver, set to true to prevent possible logging of tokens in volume attributes"

func csiDriverWarnings(_ context.Context, o registry.Object) []string {
	spec := getMap(obj(o), "spec")
	if len(getList(spec, "tokenRequests")) > 0 && spec["serviceAccountTokenInSecrets"] == nil {
		return []string{csiTokenWarning}
	}
	return nil
}

// csiDriverUpdateWarnings warns as csiDriverWarnings when the token
// requests change.
func csiDriverUpdateWarnings(ctx context.Context, o, old registry.Object) []string {
	if equal(get(obj(o), "spec", "tokenRequests"), get(obj(old), "spec", "tokenRequests")) {
		return nil
	}
	return csiDriverWarnings(ctx, o)
}

// validateCSIDriver is validateCSIDriverSpec.
func validateCSIDriver(_ context.Context, o registry.Object) fieldErrors {
	spec := getMap(obj(o), "spec")
	var errs fieldErrors
	// kube names attachRequired's path "attachedRequired".
	for _, f := range []struct{ key, path string }{{"attachRequired", "attachedRequired"}, {"podInfoOnMount", "podInfoOnMount"}, {"storageCapacity", "storageCapacity"}} {
		if spec[f.key] == nil {
			errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: "spec." + f.path})
		}
	}
	errs = append(errs, oneOf(spec, "spec.fsGroupPolicy", false, []string{"File", "None", "ReadWriteOnceWithFSType"}, "fsGroupPolicy")...)
	audiences := map[string]bool{}
	for i, tr := range maps(spec, "tokenRequests") {
		path := fmt.Sprintf("spec.tokenRequests[%d]", i)
		aud := getString(tr, "audience")
		if audiences[aud] {
			errs = append(errs, registry.FieldError{Type: validation.TypeDuplicate, Field: path + ".audience", Value: aud})
			continue
		}
		audiences[aud] = true
		if tr["expirationSeconds"] == nil {
			continue
		}
		switch s := intAt(tr, "expirationSeconds"); {
		case s < 600:
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path + ".expirationSeconds", Value: s, Detail: "may not specify a duration less than 10 minutes"})
		case s > 1<<32:
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path + ".expirationSeconds", Value: s, Detail: "may not specify a duration larger than 2^32 seconds"})
		}
	}
	for _, m := range getList(spec, "volumeLifecycleModes") {
		if m != "Persistent" && m != "Ephemeral" {
			errs = append(errs, registry.FieldError{Type: validation.TypeNotSupported, Field: "spec.volumeLifecycleModes", Value: m, Detail: `supported values: "Persistent", "Ephemeral"`})
		}
	}
	if spec["seLinuxMount"] == nil {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: "spec.seLinuxMount"})
	}
	if p := spec["nodeAllocatableUpdatePeriodSeconds"]; p != nil && intAt(spec, "nodeAllocatableUpdatePeriodSeconds") < 10 {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "spec.nodeAllocatableUpdatePeriodSeconds", Value: intAt(spec, "nodeAllocatableUpdatePeriodSeconds"), Detail: "must be greater than or equal to 10 seconds"})
	}
	if v, ok := spec["serviceAccountTokenInSecrets"].(bool); ok && len(getList(spec, "tokenRequests")) == 0 {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "spec.serviceAccountTokenInSecrets", Value: v, Detail: "serviceAccountTokenInSecrets is set but no tokenRequests are specified"})
	}
	if spec["preventPodSchedulingIfMissing"] == nil {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: "spec.preventPodSchedulingIfMissing"})
	}
	return errs
}

// validateCSIDriverUpdate is ValidateCSIDriverUpdate: attachRequired
// and volumeLifecycleModes do not change.
func validateCSIDriverUpdate(ctx context.Context, o, old registry.Object) fieldErrors {
	errs := validateCSIDriver(ctx, o)
	errs = append(errs, immutable(o, old, "spec.attachedRequired", "spec", "attachRequired")...)
	return append(errs, immutable(o, old, "spec.volumeLifecycleModes", "spec", "volumeLifecycleModes")...)
}

// validateCSIDriverName is core's ValidateCSIDriverName: required, at
// most 63 characters, a DNS subdomain once lowercased.
func validateCSIDriverName(name, path string) fieldErrors {
	if name == "" {
		return fieldErrors{{Type: validation.TypeRequired, Field: path}}
	}
	var errs fieldErrors
	if len(name) > 63 {
		errs = append(errs, registry.FieldError{Type: validation.TypeTooLong, Field: path, Detail: "may not be more than 63 bytes"})
	}
	return appendInvalid(errs, path, name, validation.IsDNS1123Subdomain(strings.ToLower(name)))
}

// csiNodeIDMaxLength bounds a CSINode driver's nodeID.
const csiNodeIDMaxLength = 256

// validateCSINode is validateCSINodeDrivers: each driver's name, nodeID
// and allocatable count, names once each, topology keys qualified
// names, once each.
func validateCSINode(_ context.Context, o registry.Object) fieldErrors {
	var errs fieldErrors
	seen := map[string]bool{}
	for i, d := range maps(obj(o), "spec", "drivers") {
		path := fmt.Sprintf("spec.drivers[%d]", i)
		name := getString(d, "name")
		errs = append(errs, validateCSIDriverName(name, path+".name")...)
		id := getString(d, "nodeID")
		if id == "" {
			errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: path + ".nodeID"})
		}
		if len(id) > csiNodeIDMaxLength {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path + ".nodeID", Value: id, Detail: fmt.Sprintf("must be %d characters or less", csiNodeIDMaxLength)})
		}
		errs = append(errs, nonNegative(d, path+".allocatable.count", "allocatable", "count")...)
		if seen[name] {
			errs = append(errs, registry.FieldError{Type: validation.TypeDuplicate, Field: path + ".name", Value: name})
		}
		seen[name] = true
		keys := map[string]bool{}
		for _, k := range getList(d, "topologyKeys") {
			key, _ := k.(string)
			if key == "" {
				errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: path})
			}
			if keys[key] {
				errs = append(errs, registry.FieldError{Type: validation.TypeDuplicate, Field: path, Value: key})
			}
			keys[key] = true
			errs = appendInvalid(errs, path, key, validation.IsQualifiedName(key))
		}
	}
	return errs
}

// validateCSINodeUpdate is ValidateCSINodeUpdate (MutableCSINodeAllocatableCount
// on): a driver keeps everything but its allocatable count. The value
// kube names is the new driver, as its internal Go struct.
func validateCSINodeUpdate(ctx context.Context, o, old registry.Object) fieldErrors {
	if statusWrite(ctx) {
		return nil // ValidateCSINodeStatusUpdate: only the status's storageHealth, which CSIVolumeHealth (off) drops
	}
	errs := validateCSINode(ctx, o)
	for _, was := range maps(obj(old), "spec", "drivers") {
		for _, d := range maps(obj(o), "spec", "drivers") {
			if getString(d, "name") != getString(was, "name") {
				continue
			}
			a, b := csiNodeDriver(d), csiNodeDriver(was)
			if !equal(a, b) {
				errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "spec.drivers", Value: a, Detail: "field is immutable"})
			}
		}
	}
	return errs
}

// csiNodeDriverValue is kube's internal storage.CSINodeDriver with its
// allocatable left out, as encoding/json writes it.
type csiNodeDriverValue struct {
	Name         string
	NodeID       string
	TopologyKeys []string
	Allocatable  *struct{ Count *int64 }
}

func csiNodeDriver(d map[string]any) csiNodeDriverValue {
	v := csiNodeDriverValue{Name: getString(d, "name"), NodeID: getString(d, "nodeID")}
	for _, k := range getList(d, "topologyKeys") {
		s, _ := k.(string)
		v.TopologyKeys = append(v.TopologyKeys, s)
	}
	return v
}

// prepareCSINodeUpdate drops a status's storageHealth that the stored
// object does not have (dropDisabledCSINodeFields, CSIVolumeHealth off).
func prepareCSINodeUpdate(_ context.Context, o, old registry.Object) error {
	if len(getList(obj(old), "status", "storageHealth")) == 0 {
		delete(getMap(obj(o), "status"), "storageHealth")
	}
	return nil
}

// validateCSIStorageCapacity is ValidateCSIStorageCapacity: the node
// topology is a valid label selector (its values too, unless the stored
// one had bad ones), the class name a DNS subdomain, the capacity not
// negative.
func validateCSIStorageCapacity(_ context.Context, o registry.Object) fieldErrors {
	return csiStorageCapacityErrors(obj(o), false)
}

func csiStorageCapacityErrors(m map[string]any, allowBadValues bool) fieldErrors {
	errs := labelSelectorErrors(getMap(m, "nodeTopology"), "nodeTopology", allowBadValues)
	class := getString(m, "storageClassName")
	errs = appendInvalid(errs, "storageClassName", class, validation.IsDNS1123Subdomain(class))
	if q, ok := quantityValue(m["capacity"]); ok && q.Sign() < 0 {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "capacity", Value: m["capacity"], Detail: "must be greater than or equal to 0"})
	}
	return errs
}

// validateCSIStorageCapacityUpdate adds the immutable nodeTopology and
// storageClassName.
func validateCSIStorageCapacityUpdate(_ context.Context, o, old registry.Object) fieldErrors {
	m, was := obj(o), obj(old)
	errs := csiStorageCapacityErrors(m, len(labelSelectorErrors(getMap(was, "nodeTopology"), "", false)) > 0)
	if !equal(m["nodeTopology"], was["nodeTopology"]) {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "nodeTopology", Value: labelSelectorValue(getMap(m, "nodeTopology")), Detail: "field is immutable"})
	}
	if c := getString(m, "storageClassName"); c != getString(was, "storageClassName") {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "storageClassName", Value: c, Detail: "field is immutable"})
	}
	return errs
}

// labelSelectorValue is a *metav1.LabelSelector as encoding/json writes
// it (null when unset).
func labelSelectorValue(sel map[string]any) any {
	if sel == nil {
		return nullValue{}
	}
	return sel
}

// labelSelectorErrors is metav1's ValidateLabelSelector at path.
func labelSelectorErrors(sel map[string]any, path string, allowBadValues bool) fieldErrors {
	if sel == nil {
		return nil
	}
	var errs fieldErrors
	labels := stringMap(getMap(sel, "matchLabels"))
	for _, k := range sortedKeys(labels) {
		errs = appendInvalid(errs, path+".matchLabels", k, validation.IsQualifiedName(k))
		errs = appendInvalid(errs, path+".matchLabels", labels[k], validation.IsValidLabelValue(labels[k]))
	}
	for i, e := range maps(sel, "matchExpressions") {
		p := fmt.Sprintf("%s.matchExpressions[%d]", path, i)
		values := getList(e, "values")
		switch op := getString(e, "operator"); op {
		case "In", "NotIn":
			if len(values) == 0 {
				errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: p + ".values", Detail: "must be specified when `operator` is 'In' or 'NotIn'"})
			}
		case "Exists", "DoesNotExist":
			if len(values) > 0 {
				errs = append(errs, registry.FieldError{Type: validation.TypeForbidden, Field: p + ".values", Detail: "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"})
			}
		default:
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: p + ".operator", Value: op, Detail: "not a valid selector operator"})
		}
		key := getString(e, "key")
		errs = appendInvalid(errs, p+".key", key, validation.IsQualifiedName(key))
		if !allowBadValues {
			for j, v := range values {
				s, _ := v.(string)
				errs = appendInvalid(errs, fmt.Sprintf("%s.values[%d]", p, j), s, validation.IsValidLabelValue(s))
			}
		}
	}
	return errs
}

// deprecatedNodeLabels are the node labels kube warns of in a selector
// (pkg/api/node).
var deprecatedNodeLabels = map[string]string{
	`beta.kubernetes.io/arch`:                       `deprecated since v1.14; use "kubernetes.io/arch" instead`,
	`beta.kubernetes.io/os`:                         `deprecated since v1.14; use "kubernetes.io/os" instead`,
	`failure-domain.beta.kubernetes.io/region`:      `deprecated since v1.17; use "topology.kubernetes.io/region" instead`,
	`failure-domain.beta.kubernetes.io/zone`:        `deprecated since v1.17; use "topology.kubernetes.io/zone" instead`,
	`beta.kubernetes.io/instance-type`:              `deprecated since v1.17; use "node.kubernetes.io/instance-type" instead`,
	`app.kubernetes.io/created-by`:                  `deprecated since v1.9`,
	`scheduler.alpha.kubernetes.io/preferAvoidPods`: `deprecated since v1.22; use Taints and Tolerations instead`,
	`node-role.kubernetes.io/master`:                `use "node-role.kubernetes.io/control-plane" instead`,
}

// csiStorageCapacityWarnings is GetWarningsForCSIStorageCapacity: the
// deprecated node labels its topology selects on.
func csiStorageCapacityWarnings(_ context.Context, o registry.Object) []string {
	sel := getMap(obj(o), "nodeTopology")
	var out []string
	for i, e := range maps(sel, "matchExpressions") {
		if msg, ok := deprecatedNodeLabels[getString(e, "key")]; ok {
			out = append(out, fmt.Sprintf("nodeTopology.matchExpressions[%d].key: %s is %s", i, getString(e, "key"), msg))
		}
	}
	for _, k := range sortedKeys(stringMap(getMap(sel, "matchLabels"))) {
		if msg, ok := deprecatedNodeLabels[k]; ok {
			out = append(out, "nodeTopology.matchLabels."+k+": "+msg)
		}
	}
	return out
}

// VolumeAttachment limits.
const (
	maxAttachedVolumeMetadataSize = 256 << 10
	maxVolumeErrorMessageSize     = 1024
)

// validateVolumeAttachment is ValidateVolumeAttachment: on create, the
// attacher's errors (declarative in 1.37) come last.
func validateVolumeAttachment(_ context.Context, o registry.Object) fieldErrors {
	return append(volumeAttachmentErrors(obj(o)), attacherErrors(getString(obj(o), "spec", "attacher"))...)
}

// attacherErrors is the declarative check of a VolumeAttachment's
// attacher: required, a DNS subdomain in any case, at most 63
// characters (the hand-written check, validateCSIDriverName, counts
// bytes and lowercases).
func attacherErrors(a string) fieldErrors {
	const path = "spec.attacher"
	if a == "" {
		return fieldErrors{{Type: validation.TypeRequired, Field: path}}
	}
	var errs fieldErrors
	if msgs := validation.IsDNS1123Subdomain(strings.ToLower(a)); len(msgs) > 0 {
		for _, m := range msgs {
			m = strings.Replace(m, "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric", "an RFC 1123 subdomain must consist of alphanumeric", 1)
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path, Value: a, Detail: strings.Replace(m, "'example.com'", "'Example.com'", 1)})
		}
	}
	if len(a) > 63 {
		errs = append(errs, registry.FieldError{Type: validation.TypeTooLong, Field: path, Detail: "may not be more than 63 characters"})
	}
	return errs
}

// volumeAttachmentErrors is ValidateVolumeAttachment but the attacher:
// exactly one source, a node name and persistent volume name that are
// DNS subdomains, a status within kube's sizes.
func volumeAttachmentErrors(m map[string]any) fieldErrors {
	var errs fieldErrors
	src := getMap(m, "spec", "source")
	pv, hasPV := src["persistentVolumeName"].(string)
	inline := src["inlineVolumeSpec"] != nil
	switch {
	case !inline && !hasPV:
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: "spec.source", Detail: "must specify exactly one of inlineVolumeSpec and persistentVolumeName"})
	case inline && hasPV:
		errs = append(errs, registry.FieldError{Type: validation.TypeForbidden, Field: "spec.source", Detail: "must specify exactly one of inlineVolumeSpec and persistentVolumeName"})
	case hasPV && pv == "":
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: "spec.source.persistentVolumeName", Detail: "must specify non empty persistentVolumeName"})
	case inline:
		errs = append(errs, inlineVolumeSpecErrors(getMap(src, "inlineVolumeSpec"), "spec.source.inlineVolumeSpec")...)
	}
	node := getString(m, "spec", "nodeName")
	errs = appendInvalid(errs, "spec.nodeName", node, validation.IsDNS1123Subdomain(node))
	st := getMap(m, "status")
	size := 0
	for k, v := range stringMap(getMap(st, "attachmentMetadata")) {
		size += len(k) + len(v)
	}
	if size > maxAttachedVolumeMetadataSize {
		errs = append(errs, registry.FieldError{Type: validation.TypeTooLong, Field: "status.attachmentMetadata", Detail: fmt.Sprintf("may not be more than %d bytes", maxAttachedVolumeMetadataSize)})
	}
	for _, f := range []string{"attachError", "detachError"} {
		e := getMap(st, f)
		if len(getString(e, "message")) > maxVolumeErrorMessageSize {
			errs = append(errs, registry.FieldError{Type: validation.TypeTooLong, Field: "status." + f + ".message", Detail: fmt.Sprintf("may not be more than %d bytes", maxVolumeErrorMessageSize)})
		}
		if e["errorCode"] != nil && intAt(e, "errorCode") < 0 {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "status." + f + ".errorCode", Value: intAt(e, "errorCode"), Detail: "must be between 0 and 2147483647, inclusive"})
		}
	}
	if hasPV {
		errs = appendInvalid(errs, "spec.source.persistentVolumeName", pv, validation.IsDNS1123Subdomain(pv))
	}
	return errs
}

// inlineNotAllowed is kube's reason for what an inline volume may not say.
const inlineNotAllowed = "may not be specified in the context of inline volumes"

// volumeSources are a PersistentVolumeSpec's volume types in the order
// kube counts them, by JSON key, with the field name kube's path uses.
var volumeSources = []struct{ key, path string }{{"hostPath", "hostPath"}, {"gcePersistentDisk", "gcePersistentDisk"},
	{"awsElasticBlockStore", "awsElasticBlockStore"}, {"glusterfs", "glusterfs"}, {"flocker", "flocker"}, {"nfs", "nfs"}, {"rbd", "rbd"},
	{"quobyte", "quobyte"}, {"cephfs", "cephFS"}, {"iscsi", "iscsi"}, {"cinder", "cinder"}, {"fc", "fc"}, {"azureFile", "azureFile"},
	{"vsphereVolume", "vsphereVolume"}, {"photonPersistentDisk", "photonPersistentDisk"}, {"portworxVolume", "portworxVolume"},
	{"azureDisk", "azureDisk"}, {"scaleIO", "scaleIO"}, {"local", "local"}, {"storageos", "storageos"}, {"csi", "csi"}}

// inlineVolumeSpecErrors is ValidatePersistentVolumeSpec of an inline
// volume (a VolumeAttachment's): no claimRef, capacity, nodeAffinity or
// storage class, a CSI source (its driver and volume handle), access
// modes, reclaim policy Retain and volume mode Filesystem if any. The
// other volume types' own fields are not checked.
func inlineVolumeSpecErrors(spec map[string]any, path string) fieldErrors {
	var errs fieldErrors
	forbid := func(f, detail string) {
		errs = append(errs, registry.FieldError{Type: validation.TypeForbidden, Field: path + "." + f, Detail: detail})
	}
	if spec["claimRef"] != nil {
		forbid("claimRef", inlineNotAllowed)
	}
	if len(getMap(spec, "capacity")) > 0 {
		forbid("capacity", inlineNotAllowed)
	}
	if spec["csi"] == nil {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: path + ".csi", Detail: "has to be specified in the context of inline volumes"})
	}
	modes := getList(spec, "accessModes")
	if len(modes) == 0 {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: path + ".accessModes"})
	}
	rwop, other := false, false
	for _, m := range modes {
		switch m {
		case "ReadWriteOncePod":
			rwop = true
		case "ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany":
			other = true
		default:
			errs = append(errs, registry.FieldError{Type: validation.TypeNotSupported, Field: path + ".accessModes", Value: m,
				Detail: `supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"`})
		}
	}
	if rwop && other {
		forbid("accessModes", "may not use ReadWriteOncePod with other access modes")
	}
	if p := getString(spec, "persistentVolumeReclaimPolicy"); p != "" && p != "Retain" {
		forbid("persistentVolumeReclaimPolicy", "may only be Retain in the context of inline volumes")
	}
	if spec["nodeAffinity"] != nil {
		forbid("nodeAffinity", inlineNotAllowed)
	}
	n := 0
	for _, v := range volumeSources {
		if spec[v.key] == nil {
			continue
		}
		if n > 0 {
			forbid(v.path, "may not specify more than 1 volume type")
			continue
		}
		n++
		if v.key == "csi" {
			csi := getMap(spec, "csi")
			errs = append(errs, validateCSIDriverName(getString(csi, "driver"), path+".csi.driver")...)
			if getString(csi, "volumeHandle") == "" {
				errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: path + ".csi.volumeHandle"})
			}
		}
	}
	if n == 0 {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: path, Detail: "must specify a volume type"})
	}
	if getString(spec, "storageClassName") != "" {
		forbid("storageClassName", inlineNotAllowed)
	}
	if m, ok := spec["volumeMode"].(string); ok && m != "Filesystem" {
		forbid("volumeMode", "may not specify volumeMode other than Filesystem in the context of inline volumes")
	}
	return errs
}

// validateVolumeAttachmentUpdate is ValidateVolumeAttachmentUpdate: the
// spec does not change (declarative: its error names no value and comes
// last). A status write keeps the spec, so only the status is checked.
func validateVolumeAttachmentUpdate(_ context.Context, o, old registry.Object) fieldErrors {
	m := obj(o)
	// On update the attacher's hand-written errors stand where kube's
	// handwritten validation puts them: the declarative check of an
	// unchanged attacher reports none, of a changed spec stops there.
	errs := append(validateCSIDriverName(getString(m, "spec", "attacher"), "spec.attacher"), volumeAttachmentErrors(m)...)
	if !equal(m["spec"], obj(old)["spec"]) {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "spec", Value: nil, Detail: "field is immutable"})
	}
	return errs
}

// validateVolumeAttributesClass is ValidateVolumeAttributesClass: a
// driver name (a qualified name once lowercased) and parameters.
func validateVolumeAttributesClass(_ context.Context, o registry.Object) fieldErrors {
	m := obj(o)
	var errs fieldErrors
	driver := getString(m, "driverName")
	if driver == "" {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: "driverName"})
	} else {
		errs = appendInvalid(errs, "driverName", strings.ToLower(driver), validation.IsQualifiedName(strings.ToLower(driver)))
	}
	return append(errs, parametersErrors(getMap(m, "parameters"), "parameters")...)
}

// Limits of a class's parameters.
const (
	maxParameterSize = 256 << 10
	maxParameters    = 512
)

// parametersErrors is validateParameters without empty parameters
// allowed.
func parametersErrors(params map[string]any, path string) fieldErrors {
	if len(params) > maxParameters {
		return fieldErrors{{Type: validation.TypeTooLong, Field: path, Detail: fmt.Sprintf("may not be more than %d bytes", maxParameters)}}
	}
	var errs fieldErrors
	size := 0
	for k, v := range stringMap(params) {
		if k == "" {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path, Value: k, Detail: "field can not be empty."})
		}
		size += len(k) + len(v)
	}
	if size > maxParameterSize {
		errs = append(errs, registry.FieldError{Type: validation.TypeTooLong, Field: path, Detail: fmt.Sprintf("may not be more than %d bytes", maxParameterSize)})
	}
	if len(params) == 0 {
		errs = append(errs, registry.FieldError{Type: validation.TypeRequired, Field: path, Detail: "must contain at least one key/value pair"})
	}
	return errs
}

// validateVolumeAttributesClassUpdate is ValidateVolumeAttributesClassUpdate:
// driverName and parameters are forbidden to change, before the create
// rules.
func validateVolumeAttributesClassUpdate(ctx context.Context, o, old registry.Object) fieldErrors {
	var errs fieldErrors
	if getString(obj(o), "driverName") != getString(obj(old), "driverName") {
		errs = append(errs, registry.FieldError{Type: validation.TypeForbidden, Field: "driverName", Detail: "updates to driverName are forbidden."})
	}
	if !equal(stringMap(obj(o)["parameters"]), stringMap(obj(old)["parameters"])) {
		errs = append(errs, registry.FieldError{Type: validation.TypeForbidden, Field: "parameters", Detail: "updates to parameters are forbidden."})
	}
	return append(errs, validateVolumeAttributesClass(ctx, o)...)
}

// validateRuntimeClass is ValidateRuntimeClass: overhead and scheduling
// (hand-written), then the handler (declarative in 1.37: required, a DNS
// label).
func validateRuntimeClass(_ context.Context, o registry.Object) fieldErrors {
	m := obj(o)
	return append(runtimeClassErrors(m), handlerErrors(getString(m, "handler"))...)
}

func handlerErrors(h string) fieldErrors {
	if h == "" {
		return fieldErrors{{Type: validation.TypeRequired, Field: "handler"}}
	}
	return appendInvalid(nil, "handler", h, validation.IsDNS1123Label(h))
}

// validateRuntimeClassUpdate: a changed handler is immutable (the
// declarative error, with no value, last; its hand-written format errors
// first, which the declarative check, stopped at immutability, does not
// replace).
func validateRuntimeClassUpdate(_ context.Context, o, old registry.Object) fieldErrors {
	m := obj(o)
	h := getString(m, "handler")
	if h == getString(obj(old), "handler") {
		return runtimeClassErrors(m)
	}
	errs := append(handlerErrors(h), runtimeClassErrors(m)...)
	return append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: "handler", Value: nil, Detail: "field is immutable"})
}

// runtimeClassErrors is ValidateRuntimeClass's overhead (a container's
// resource limits) and scheduling (node selector labels, tolerations,
// once each).
func runtimeClassErrors(m map[string]any) fieldErrors {
	var errs fieldErrors
	fixed := getMap(m, "overhead", "podFixed")
	names := make([]string, 0, len(fixed))
	for k := range fixed {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		errs = append(errs, containerResourceErrors(name, fixed[name], "overhead.limits["+name+"]")...)
	}
	sched := getMap(m, "scheduling")
	sel := stringMap(getMap(sched, "nodeSelector"))
	for _, k := range sortedKeys(sel) {
		errs = appendInvalid(errs, "scheduling.nodeSelector", k, validation.IsQualifiedName(k))
		errs = appendInvalid(errs, "scheduling.nodeSelector", sel[k], validation.IsValidLabelValue(sel[k]))
	}
	var seen []tolerationValue
	for i, t := range maps(sched, "tolerations") {
		errs = append(errs, tolerationErrors(t, fmt.Sprintf("scheduling.tolerations[%d]", i))...)
		key := tolerationValue{Key: getString(t, "key"), Operator: getString(t, "operator"), Value: getString(t, "value"), Effect: getString(t, "effect")}
		if slices.Contains(seen, key) {
			v := key
			if t["tolerationSeconds"] != nil {
				s := intAt(t, "tolerationSeconds")
				v.TolerationSeconds = &s
			}
			errs = append(errs, registry.FieldError{Type: validation.TypeDuplicate, Field: fmt.Sprintf("scheduling.tolerations[%d]", i), Value: v})
		}
		seen = append(seen, key)
	}
	return errs
}

// tolerationValue is kube's internal core.Toleration, as encoding/json
// writes it.
type tolerationValue struct {
	Key, Operator, Value, Effect string
	TolerationSeconds            *int64
}

// standardContainerResources are the resources a container may name
// without a domain (hugepages-* besides).
var standardContainerResources = map[string]bool{"cpu": true, "memory": true, "ephemeral-storage": true}

// standardResources are the other resource names kube knows.
var standardResources = map[string]bool{"requests.cpu": true, "requests.memory": true, "requests.ephemeral-storage": true,
	"limits.cpu": true, "limits.memory": true, "limits.ephemeral-storage": true, "pods": true, "resourcequotas": true, "services": true,
	"replicationcontrollers": true, "secrets": true, "configmaps": true, "persistentvolumeclaims": true, "storage": true,
	"requests.storage": true, "services.nodeports": true, "services.loadbalancers": true}

// containerResourceErrors is the part of validateResourceRequirements
// one limit meets: its name (qualified, and standard for containers when
// it has no domain) and a quantity not negative.
func containerResourceErrors(name string, q any, path string) fieldErrors {
	errs := appendInvalid(nil, path, name, validation.IsQualifiedName(name))
	if len(errs) == 0 && !strings.Contains(name, "/") {
		container := standardContainerResources[name] || strings.HasPrefix(name, "hugepages-")
		if !container && !standardResources[name] && !strings.HasPrefix(name, "requests.hugepages-") {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path, Value: name, Detail: "must be a standard resource type or fully qualified"})
		}
		if !container {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path, Value: name, Detail: "must be a standard resource for containers"})
		}
	}
	if v, ok := quantityValue(q); ok && v.Sign() < 0 {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path, Value: q, Detail: "must be greater than or equal to 0"})
	}
	return errs
}

// tolerationErrors is core's ValidateTolerations of one toleration.
func tolerationErrors(t map[string]any, path string) fieldErrors {
	var errs fieldErrors
	key, op, value, effect := getString(t, "key"), getString(t, "operator"), getString(t, "value"), getString(t, "effect")
	if key != "" {
		errs = appendInvalid(errs, path+".key", key, validation.IsQualifiedName(key))
	}
	if key == "" && op != "Exists" {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path + ".operator", Value: op, Detail: "operator must be Exists when `key` is empty, which means \"match all values and all keys\""})
	}
	if t["tolerationSeconds"] != nil && effect != "NoExecute" {
		errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path + ".effect", Value: effect, Detail: "effect must be 'NoExecute' when `tolerationSeconds` is set"})
	}
	switch op {
	case "Equal", "":
		if msgs := validation.IsValidLabelValue(value); len(msgs) > 0 {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path + ".operator", Value: value, Detail: strings.Join(msgs, ";")})
		}
	case "Exists":
		if value != "" {
			errs = append(errs, registry.FieldError{Type: validation.TypeInvalid, Field: path + ".operator", Value: value, Detail: "value must be empty when `operator` is 'Exists'"})
		}
	default:
		errs = append(errs, registry.FieldError{Type: validation.TypeNotSupported, Field: path + ".operator", Value: op, Detail: `supported values: "Equal", "Exists"`})
	}
	if effect != "" && effect != "NoSchedule" && effect != "PreferNoSchedule" && effect != "NoExecute" {
		errs = append(errs, registry.FieldError{Type: validation.TypeNotSupported, Field: path + ".effect", Value: effect, Detail: `supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"`})
	}
	return errs
}

// runtimeClassWarnings is GetWarningsForRuntimeClass: deprecated node
// labels in its node selector.
func runtimeClassWarnings(_ context.Context, o registry.Object) []string {
	var out []string
	for _, k := range sortedKeys(stringMap(getMap(obj(o), "scheduling", "nodeSelector"))) {
		if msg, ok := deprecatedNodeLabels[k]; ok {
			out = append(out, "scheduling.nodeSelector: "+msg)
		}
	}
	return out
}

// The storage and node kinds' columns (kube's printCSIDriver,
// printCSINode, printVolumeAttachment, printVolumeAttributesClass,
// printRuntimeClass); their descriptions are the fields' docs.
var storageColumns = map[string][]registry.Column{
	"storage.k8s.io/csidrivers": {
		col("AttachRequired", "boolean", descAttachRequired, boolOr(true, "spec", "attachRequired")),
		col("PodInfoOnMount", "boolean", descPodInfoOnMount, boolOr(false, "spec", "podInfoOnMount")),
		col("StorageCapacity", "boolean", descStorageCapacity, boolOr(false, "spec", "storageCapacity")),
		col("TokenRequests", "string", descTokenRequests, func(o map[string]any) any {
			if get(o, "spec", "tokenRequests") == nil {
				return "<unset>"
			}
			var auds []string
			for _, t := range maps(o, "spec", "tokenRequests") {
				auds = append(auds, getString(t, "audience"))
			}
			return strings.Join(auds, ",")
		}),
		col("RequiresRepublish", "boolean", descRequiresRepublish, boolOr(false, "spec", "requiresRepublish")),
		col("Modes", "string", descVolumeLifecycleModes, func(o map[string]any) any {
			var modes []string
			for _, m := range getList(o, "spec", "volumeLifecycleModes") {
				s, _ := m.(string)
				modes = append(modes, s)
			}
			return orNone(strings.Join(modes, ","))
		}),
		age,
	},
	"storage.k8s.io/csinodes": {
		col("Drivers", "integer", "Drivers indicates the number of CSI drivers registered on the node", func(o map[string]any) any {
			return int64(len(getList(o, "spec", "drivers")))
		}),
		age,
	},
	"storage.k8s.io/volumeattachments": {
		// Two columns of format "name", as kube's: the table has no NAME
		// column of its own.
		nameFormat(col("Name", "string", nameDescription, str("metadata", "name"))),
		nameFormat(col("Attacher", "string", "attacher indicates the name of the volume driver that MUST handle this request. This is the name returned by GetPluginName().", str("spec", "attacher"))),
		col("PV", "string", "persistentVolumeName represents the name of the persistent volume to attach.", str("spec", "source", "persistentVolumeName")),
		col("Node", "string", "nodeName represents the node that the volume should be attached to.", str("spec", "nodeName")),
		col("Attached", "boolean", "attached indicates the volume is successfully attached. This field must only be set by the entity completing the attach operation, i.e. the external-attacher.", boolOr(false, "status", "attached")),
		age,
	},
	"storage.k8s.io/volumeattributesclasses": {
		col("DriverName", "string", "driverName is the name of the CSI driver This field is immutable.", str("driverName")),
		age,
	},
	"node.k8s.io/runtimeclasses": {
		col("Handler", "string", "", str("handler")), // kube's doc of ObjectMeta's (absent) handler
		age,
	},
}

func nameFormat(c registry.Column) registry.Column { c.Format = "name"; return c }

func boolOr(dflt bool, path ...string) func(o map[string]any) any {
	return func(o map[string]any) any {
		if b, ok := get(o, path...).(bool); ok {
			return b
		}
		return dflt
	}
}

const (
	nameDescription          = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
	descAttachRequired       = "attachRequired indicates this CSI volume driver requires an attach operation (because it implements the CSI ControllerPublishVolume() method), and that the Kubernetes attach detach controller should call the attach volume interface which checks the volumeattachment status and waits until the volume is attached before proceeding to mounting. The CSI external-attacher coordinates with CSI volume driver and updates the volumeattachment status when the attach operation is complete. If the value is specified to false, the attach operation will be skipped. Otherwise the attach operation will be called.\n\nThis field is immutable."
	descPodInfoOnMount       = "podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, podUID, etc.) during mount operations, if set to true. If set to false, pod information will not be passed on mount. Default is false.\n\nThe CSI driver specifies podInfoOnMount as part of driver deployment. If true, Kubelet will pass pod information as VolumeContext in the CSI NodePublishVolume() calls. The CSI driver is responsible for parsing and validating the information passed in as VolumeContext.\n\nThe following VolumeContext will be passed if podInfoOnMount is set to true. This list might grow, but the prefix will be used. \"csi.storage.k8s.io/pod.name\": pod.Name \"csi.storage.k8s.io/pod.namespace\": pod.Namespace \"csi.storage.k8s.io/pod.uid\": string(pod.UID) \"csi.storage.k8s.io/ephemeral\": \"true\" if the volume is an ephemeral inline volume\n                                defined by a CSIVolumeSource, otherwise \"false\"\n\n\"csi.storage.k8s.io/ephemeral\" is a new feature in Kubernetes 1.16. It is only required for drivers which support both the \"Persistent\" and \"Ephemeral\" VolumeLifecycleMode. Other drivers can leave pod info disabled and/or ignore this field. As Kubernetes 1.15 doesn't support this field, drivers can only support one mode when deployed on such a cluster and the deployment determines which mode that is, for example via a command line parameter of the driver.\n\nThis field was immutable in Kubernetes < 1.29 and now is mutable."
	descStorageCapacity      = "storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report by creating CSIStorageCapacity objects with capacity information, if set to true.\n\nThe check can be enabled immediately when deploying a driver. In that case, provisioning new volumes with late binding will pause until the driver deployment has published some suitable CSIStorageCapacity object.\n\nAlternatively, the driver can be deployed with the field unset or false and it can be flipped later when storage capacity information has been published.\n\nThis field was immutable in Kubernetes <= 1.22 and now is mutable."
	descTokenRequests        = "tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to do necessary authentication. Kubelet will pass the tokens in VolumeContext in the CSI NodePublishVolume calls. The CSI driver should parse and validate the following VolumeContext: \"csi.storage.k8s.io/serviceAccount.tokens\": {\n  \"<audience>\": {\n    \"token\": <token>,\n    \"expirationTimestamp\": <expiration timestamp in RFC3339>,\n  },\n  ...\n}\n\nNote: Audience in each TokenRequest should be different and at most one token is empty string. To receive a new token after expiry, RequiresRepublish can be used to trigger NodePublishVolume periodically."
	descRequiresRepublish    = "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume. This field defaults to false.\n\nNote: After a successful initial NodePublishVolume call, subsequent calls to NodePublishVolume should only update the contents of the volume. New mount points will not be seen by a running container."
	descVolumeLifecycleModes = "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports. The default if the list is empty is \"Persistent\", which is the usage defined by the CSI specification and implemented in Kubernetes via the usual PV/PVC mechanism.\n\nThe other mode is \"Ephemeral\". In this mode, volumes are defined inline inside the pod spec with CSIVolumeSource and their lifecycle is tied to the lifecycle of that pod. A driver has to be aware of this because it is only going to get a NodePublishVolume call for such a volume.\n\nFor more information about implementing this mode, see https://kubernetes-csi.github.io/docs/ephemeral-local-volumes.html A driver can support one or more of these modes and more modes may be added in the future.\n\nThis field is beta. This field is immutable."
)
