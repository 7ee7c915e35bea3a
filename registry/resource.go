package registry

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/kapi-dev/kapi/internal/jsonval"
	"github.com/kapi-dev/kapi/internal/validation"
	"github.com/kapi-dev/kapi/internal/weakmemo"
	"github.com/kapi-dev/kapi/patch"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/storage"
)

// Resource defines one served resource type. Group, Version, Kind and
// Plural are required; the rest has defaults.
type Resource struct {
	Group      string // "" for the core group, served under /api/v1
	Version    string
	Kind       string
	Plural     string
	Singular   string // default: lowercased Kind
	ShortNames []string
	Categories []string
	Namespaced bool

	// Status enables the status subresource: the main resource ignores
	// changes to .status, /status ignores everything else.
	Status bool
	// StatusSubresources are subresources served as status is, with
	// Status set: get, update and patch (apply too) of the whole object,
	// whose writes change its status alone. The strategy tells them
	// apart by the request's subresource (request.InfoFrom(ctx)) and
	// narrows what each may change, as kube's
	// certificatesigningrequests/approval, whose writes keep all of the
	// status but its conditions:
	//
	//	PUT …/certificatesigningrequests/c/approval {spec: X, status: {conditions: [Approved]}}
	//	  → spec and metadata as stored; status as sent (then the strategy's
	//	    PrepareForUpdate keeps the stored status.certificate)
	StatusSubresources []string
	// Scale enables the scale subresource (autoscaling/v1 Scale).
	Scale *Scale
	// Subresources are user-defined subresource handlers, by name.
	Subresources map[string]SubresourceHandler
	// UpdateSubresources are subresources served by PUT alone, as an
	// update of the object through the write pipeline with the request's
	// subresource set, kube's namespaces/NAME/finalize: the strategy
	// tells them apart (request.InfoFrom(ctx).Subresource), the status
	// is kept. Discovery says they serve update.
	UpdateSubresources []string
	// SubresourceKinds are what discovery says of Subresources whose
	// bodies are a kind of their own, by name (kube's pods/eviction:
	// {Group: "policy", Version: "v1", Kind: "Eviction", Verbs:
	// []string{"create"}}); the others are said to answer with the
	// resource's kind and serve get, patch and update.
	SubresourceKinds map[string]SubresourceKind
	// Review, when set, makes the resource a review, as kube's
	// SelfSubjectAccessReview and TokenReview are: nothing is stored, and
	// create is its only verb. A POST's body is decoded as any create's,
	// Review computes the answer (usually the object with its status
	// filled), which is sent back with 201.
	Review func(ctx context.Context, obj Object) (Object, error)

	// SelectableFields are extra field-selector paths, e.g. "spec.color".
	// metadata.name and metadata.namespace are always selectable.
	SelectableFields []string
	// Schema describes the whole object (apiVersion, kind, metadata, spec,
	// status): it is published in OpenAPI, and strategic merge patch and
	// server-side apply merge by its list and map types. Nil means "any
	// object": strategic merge patch is then refused (415, as kube does for
	// custom resources) and apply treats every list as atomic.
	Schema *schema.Schema
	// OpenAPI, when set, is what the OpenAPI v3 documents publish for the
	// resource instead of Schema's JSON form: named definitions joined by
	// $ref, as kube publishes its built-in kinds (package builtin sets
	// it), so that kubectl explain prints type names and enums. Schema
	// still validates, merges and prunes.
	OpenAPI *OpenAPIDefinitions
	// Strategy holds the resource's hooks.
	Strategy Strategy

	// Protobuf, when set, is the protobuf message of the resource's
	// objects: the resource then reads and writes
	// application/vnd.kubernetes.protobuf, converting between the JSON
	// form and the message by its descriptor (codec/protobuf). Its fields
	// must carry Kubernetes' field numbers for the JSON names, as
	// k8s.io/api's generated.proto files do; protobuf.Files has the meta
	// types to import. Nil: protobuf is neither read (415) nor offered (406).
	Protobuf protoreflect.MessageDescriptor
	// TypedZero, when set, is the part of kube's zero value of the kind
	// (its typed Go struct, converted to JSON) that is there when empty:
	// its non-pointer structs, {"spec": {}, "status": {}} for a
	// Namespace. A create's managedFields then count what is set in them,
	// not the structs themselves, as kube's do (patch.FieldManagerOptions.Zero).
	TypedZero Object
	// Columns are the Table columns kubectl get shows after NAME; none
	// means NAME and CREATED AT.
	Columns []Column

	// Generation makes writes keep metadata.generation: 1 on create, one
	// more on every change outside metadata and status, as kube does for
	// custom resources and workloads (FromCRD sets it; kube's configmaps
	// and namespaces have none).
	Generation bool
	// RequireResourceVersion refuses a PUT without metadata.resourceVersion
	// (422), as kube does for custom resources (FromCRD sets it), instead
	// of replacing whatever is stored.
	RequireResourceVersion bool
	// Custom makes the resource's wire behaviour kube's for custom
	// resources, which it decodes as unstructured objects (FromCRD sets
	// it): a body needs apiVersion and kind (400), a wrong kind is a
	// field error (422), list items keep apiVersion and kind and a list
	// always has metadata.continue, a namespaced collection is served
	// across namespaces for list and watch alone (404), and discovery
	// lists its verbs in kube's order for custom resources. Unset, these
	// are kube's for its built-in kinds.
	Custom bool

	// StorageVersion, when set, is the version the resource's objects are
	// stored at (the versions of a group and plural share one storage
	// prefix): objects are converted to it on every write, and from it
	// (or any older version they were stored at) to Version on every
	// read, list and watch (convert.go). Empty: stored as written.
	StorageVersion string
	// StorageGroup, with StorageVersion, stores the resource's objects
	// with those of the same plural in another group, kube's cohabiting
	// resources: events.k8s.io Events (StorageGroup "core",
	// StorageVersion "v1") are stored as core v1 Events, under core
	// Events' prefix, so that each group reads what the other wrote,
	// converted by Convert. "core" names the core group; empty: the
	// resource's own group.
	StorageGroup string
	// StorageVersionHash, when set, is discovery's storageVersionHash of
	// the resource instead of the hash of the group, version and kind its
	// objects are stored as: kube's, where kube stores the kind at another
	// version than kapi (CustomResourceDefinitions, stored by kube at
	// apiextensions.k8s.io/v1beta1). It only names the storage version
	// for clients (a storage migrator compares it across time).
	StorageVersionHash string
	// Convert converts objects between versions when StorageVersion is
	// set; nil is kube's None strategy (apiVersion rewritten).
	Convert ConvertFunc
	// Warnings are sent with every response of the resource, as kube
	// sends a deprecated version's warning.
	Warnings []string

	convertID uint64 // numbers the resource's converted states in Memos; set by Register
	// version is the served Resource of res's group and plural at a
	// version, or the CRD's unserved one (nil if none); set by Register
	// for a converting resource.
	version func(v string) *Resource

	manager *patch.FieldManager // managedFields and server-side apply, set by Register
	rules   schema.Rules        // the schema's CEL rules, set by Register
	// unserved are the versions a CRD lists but does not serve (FromCRD
	// sets it; nil when none): the field manager's converter compares
	// their managers there.
	unserved *unservedVersions
	// defaults, set by Register, is the schema cut down to the paths of
	// its defaults (defaultsOnly), which fills them in on reads and
	// writes; nil when it has none.
	defaults *schema.Schema
	merge    *schema.Schema // Schema with ObjectMeta's, for merging; set by Register
	// retired is made by Register and closed when the resource stops
	// being served (Replace, Unregister): its open watches then end.
	retired chan struct{}
}

// mergeSchema is s with metadata described by ObjectMeta's schema, so that
// strategic merge and apply merge finalizers and ownerReferences as kube
// does whatever a CRD says of metadata (it may only say "type: object").
// It is the same *schema.Schema for the same s while s lives (package
// builtin's schemas are the same in every Registry of a process), so that
// patch.NewFieldManager finds what it compiled from it for another
// Registry. Neither s nor the result is ever modified.
func mergeSchema(s *schema.Schema) *schema.Schema {
	m, _ := mergedSchemas.Get(s, func(s *schema.Schema) (*schema.Schema, error) { return newMergeSchema(s), nil })
	return m
}

// mergedSchemas are mergeSchema's results by schema.
var mergedSchemas weakmemo.Memo[schema.Schema, *schema.Schema]

func newMergeSchema(s *schema.Schema) *schema.Schema {
	if s == nil {
		return nil
	}
	m := *s
	m.Properties = maps.Clone(s.Properties)
	if m.Properties == nil {
		m.Properties = map[string]*schema.Schema{}
	}
	m.Properties["metadata"] = objectMeta // shared: never changed
	return &m
}

// resetFields are the fields each endpoint's writes reset rather than set
// (kube's GetResetFields): with a status subresource the main resource
// does not own status, and /status owns nothing else.
func (r *Resource) resetFields() map[string][]string {
	if r.Strategy.ResetFields != nil {
		return r.Strategy.ResetFields
	}
	if !r.Status {
		return nil
	}
	out := map[string][]string{"": {"status"}, "status": {"metadata", "spec"}}
	for _, sub := range r.StatusSubresources {
		out[sub] = out["status"]
	}
	return out
}

// writesStatus reports whether a write to subresource sub writes the
// object's status alone: sub is status or one of StatusSubresources.
func (r *Resource) writesStatus(sub string) bool {
	return r.Status && sub != "" && (sub == "status" || slices.Contains(r.StatusSubresources, sub))
}

// Scale maps the autoscaling/v1 Scale subresource onto an object.
type Scale struct {
	SpecReplicasPath   string // e.g. ".spec.replicas"
	StatusReplicasPath string // e.g. ".status.replicas"
	// LabelSelectorPath (optional, e.g. ".status.selector") is a string,
	// or a label selector object or map of labels (".spec.selector" of
	// kube's workloads), written as a string.
	LabelSelectorPath string
}

// FieldError is one validation failure, reported as a cause of a 422.
type FieldError = validation.Error

// Strategy holds a kind's behaviour: the per-resource hooks of the write
// pipeline (pipeline.go), each optional, called with the request's
// context (Now(ctx) is the registry's clock, Warn adds a warning).
// Objects are the decoded JSON; hooks may modify obj (never old) in
// place. A hook's error fails the write as it is: return a
// *StatusError to choose the answer (others are 500s).
//
// Kind-specific lifecycle lives here, not in the verbs: the built-in
// namespaces (namespace.go) are a Strategy like any other.
type Strategy struct {
	// Default fills defaults on create and update, before
	// PrepareForCreate or PrepareForUpdate.
	Default func(ctx context.Context, obj Object) error
	// PrepareForCreate and PrepareForUpdate run after the server fields
	// are set and before validation.
	PrepareForCreate func(ctx context.Context, obj Object) error
	PrepareForUpdate func(ctx context.Context, obj, old Object) error
	// Validation hooks; their errors answer 422 Invalid.
	ValidateCreate func(ctx context.Context, obj Object) []FieldError
	ValidateUpdate func(ctx context.Context, obj, old Object) []FieldError
	// ValidateName replaces the default DNS-1123 subdomain name rule
	// (it is also given generateName, with a trailing "-" masked); its
	// messages answer 422 Invalid.
	ValidateName func(ctx context.Context, name string) []string
	// Canonicalize normalises a valid object, after validation, on create
	// and update (kube's Canonicalize); what it sets is in no manager's
	// managedFields. On create it is the first hook that sees a name
	// generated from generateName: Default and the manager's tracking
	// run before the name is made, as in kube.
	Canonicalize func(ctx context.Context, obj Object)
	// Admit checks a valid, canonical write, on create (old nil) and
	// update, before admission hooks and webhooks: the kind's own
	// validating admission, as kube's built-in plugins (a
	// CertificateSigningRequest's approval needs "approve" on its
	// signer: Registry.Authorize). Its error fails the write as it is
	// (a *StatusError chooses the answer, usually 403).
	Admit func(ctx context.Context, obj, old Object) error
	// WarningsOnCreate and WarningsOnUpdate return warnings for a valid
	// write, sent as Warning headers (any hook may also call Warn).
	WarningsOnCreate func(ctx context.Context, obj Object) []string
	WarningsOnUpdate func(ctx context.Context, obj, old Object) []string

	// StatusWritesMetadata makes the status subresources (status and
	// Resource.StatusSubresources) write the sent metadata too, not the
	// stored one (its immutable fields stay), as kube's strategies that
	// do not call ResetObjectMetaForStatus: a CertificateSigningRequest's
	// labels change through /status and /approval.
	StatusWritesMetadata bool
	// ResetFields, when set, replaces the fields each endpoint's writes
	// reset rather than set, by subresource ("" the main resource;
	// dotted paths), kube's GetResetFields: a manager of that endpoint
	// owns none of them. Unset, a resource with a status subresource
	// has {"": {"status"}, "status": {"metadata", "spec"}} (and each of
	// StatusSubresources as status).
	ResetFields map[string][]string

	// NoDeleteCollection: the kind has no deletecollection verb (kube's
	// namespaces); a DELETE of its collection answers 405.
	NoDeleteCollection bool
	// GenericMeta: kube validates the kind's metadata by apimachinery's
	// generic rules alone (apiextensions' CRDs), so a finalizer name need
	// not be standard nor qualified: customresourcecleanup.apiextensions.k8s.io
	// is accepted on a CRD, refused on a ConfigMap (a custom resource's
	// metadata, Resource.Custom, is checked the same way).
	GenericMeta bool
	// ValidateDelete may refuse the delete of obj, the stored object.
	ValidateDelete func(ctx context.Context, obj Object) error
	// Finalizers are the kind's own finalizers of obj, besides
	// metadata.finalizers (a namespace's spec.finalizers): a delete
	// leaves an object that has any, marked with deletionTimestamp, and
	// it goes with the write that leaves it none.
	Finalizers func(ctx context.Context, obj Object) []string
	// GracePeriod makes deletes of the kind graceful (kube's
	// CheckGracefulDelete; see graceful.go): given the stored object and
	// the gracePeriodSeconds a delete asks for (nil: none; never
	// negative), it returns the object's grace period. A period of 0
	// removes the object at once, after storing deletionTimestamp; more
	// leaves it, being deleted, until a delete with a shorter one.
	GracePeriod func(ctx context.Context, obj Object, requested *int64) int64
	// PrepareForDelete changes obj, the object a delete leaves in place
	// (with deletionTimestamp set), before it is stored.
	PrepareForDelete func(ctx context.Context, obj Object) error
	// OrphanByDefault makes a delete whose options name no propagation
	// policy (nor orphanDependents) orphan the object's dependents,
	// unless its finalizers say otherwise: kube's
	// DefaultGarbageCollectionPolicy OrphanDependents, which batch/v1
	// Jobs keep for their pods. Such a DELETE, or DELETE of the
	// collection, is sent OrphanWarning as a Warning header when set.
	// kapi's own controllers (namespace deletion, the garbage collector)
	// delete with propagationPolicy Background, as kube's do.
	OrphanByDefault bool
	OrphanWarning   string
	// ReturnDeletedObject makes a DELETE that removes the object answer
	// with the object as it was, rather than a Success Status, as kube's
	// registries of pods, services, serviceaccounts, persistent volumes
	// and claims, resourcequotas, podtemplates and storageclasses do.
	ReturnDeletedObject bool
	// AfterWrite is called once a create or update is stored (never on
	// dry run) with the stored object and its revision.
	AfterWrite func(ctx context.Context, obj Object, revision uint64)
	// AfterDelete is called once a delete is stored (never on dry run):
	// gone tells whether obj was removed or left being deleted.
	AfterDelete func(ctx context.Context, obj Object, gone bool)
}

// SubresourceKind is a subresource's response kind ("" group and version:
// the resource's) and verbs, as discovery publishes them.
type SubresourceKind struct {
	Group, Version, Kind string
	Verbs                []string
}

// SubresourceHandler serves a user-defined subresource. The request names
// the object; Object is its current state.
type SubresourceHandler func(ctx context.Context, req SubresourceRequest) (any, error)

// SubresourceRequest is what a SubresourceHandler is called with.
type SubresourceRequest struct {
	Method    string
	Namespace string
	Name      string
	Object    Object // current state of the parent object
	Body      []byte
	// ContentType is the body's media type: typed clients send
	// application/vnd.kubernetes.protobuf for built-in kinds.
	ContentType string
	// Manager is the request's field manager (its fieldManager, or its
	// user agent's program), for a handler that records managedFields.
	Manager string
}

// GroupVersion returns "group/version", or "v1" style for the core group.
func (r *Resource) GroupVersion() string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}

// qualified is the resource name kube uses in messages: "widgets.example.com".
func (r *Resource) qualified() string {
	if r.Group == "" {
		return r.Plural
	}
	return r.Plural + "." + r.Group
}

// qualifiedKind is the kind name kube uses in 422 messages: "Widget.example.com".
func (r *Resource) qualifiedKind() string {
	if r.Group == "" {
		return r.Kind
	}
	return r.Kind + "." + r.Group
}

func (r *Resource) validate() error {
	switch {
	case r.Version == "" || r.Kind == "" || r.Plural == "":
		return fmt.Errorf("registry: resource %q: Version, Kind and Plural are required", r.Plural)
	case strings.ContainsAny(r.Plural, "/ ") || r.Plural != strings.ToLower(r.Plural):
		return fmt.Errorf("registry: resource %q: plural must be a lowercase path segment", r.Plural)
	}
	if r.Singular == "" {
		r.Singular = strings.ToLower(r.Kind)
	}
	if r.StorageGroup != "" && r.StorageVersion == "" {
		return fmt.Errorf("registry: resource %q: StorageGroup needs StorageVersion", r.Plural)
	}
	if r.Scale != nil && (r.Scale.SpecReplicasPath == "" || r.Scale.StatusReplicasPath == "") {
		return fmt.Errorf("registry: resource %q: Scale needs SpecReplicasPath and StatusReplicasPath", r.Plural)
	}
	return r.compileColumns()
}

// keyPrefix is the storage prefix of the whole resource:
// /<group>/<plural>/ with "core" for the core group (the StorageGroup's,
// when set).
func (r *Resource) keyPrefix() string {
	g := r.Group
	if r.StorageGroup != "" {
		g = r.StorageGroup
	}
	if g == "" {
		g = "core"
	}
	return "/" + g + "/" + r.Plural + "/"
}

// collectionKey is the prefix of a namespace's objects, or of all of them.
func (r *Resource) collectionKey(ns string) string {
	if r.Namespaced && ns != "" {
		return r.keyPrefix() + ns + "/"
	}
	return r.keyPrefix()
}

func (r *Resource) objectKey(ns, name string) string {
	if r.Namespaced {
		return r.keyPrefix() + ns + "/" + name
	}
	return r.keyPrefix() + name
}

// selectable reports whether a field selector may use field.
func (r *Resource) selectable(field string) bool {
	if field == "metadata.name" || (field == "metadata.namespace" && r.Namespaced) {
		return true
	}
	for _, f := range r.SelectableFields {
		if f == field {
			return true
		}
	}
	return false
}

// storedFields computes the field-selector attributes of a stored object
// (storage.Predicate.FieldsOf): for objects written before a selectable
// field was declared.
//
// An object stored at another version (written through another version
// of the resource, or, with StorageGroup, another group's) is converted
// first: its Fields are that version's, and an events.k8s.io selector on
// regarding.kind reads a core Event's involvedObject.kind.
func (r *Resource) storedFields(o storage.Object) map[string]string {
	obj, err := decodeStored(o.Value, o.Revision)
	if err != nil {
		return o.Fields
	}
	if gv := r.GroupVersion(); r.converts() && !at(o.Value, gv) {
		out, err := r.convert(context.Background(), []Object{obj}, gv)
		if err != nil {
			return o.Fields
		}
		obj = out[0]
	}
	return r.fields(obj)
}

// fields computes the field-selector attributes of obj. A selectable
// field obj does not have is "", as in kube: "spec.color=" selects the
// objects without a color.
func (r *Resource) fields(obj Object) map[string]string {
	f := make(map[string]string, 2+len(r.SelectableFields))
	f["metadata.name"] = obj.Name()
	if r.Namespaced {
		f["metadata.namespace"] = obj.Namespace()
	}
	for _, path := range r.SelectableFields {
		f[path] = ""
		if v, ok := obj.lookup(path); ok {
			f[path] = jsonval.Scalar(v)
		}
	}
	return f
}
