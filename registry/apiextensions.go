package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/kapi-dev/kapi/codec/protobuf"
	"github.com/kapi-dev/kapi/registry/admission/webhook"
	"github.com/kapi-dev/kapi/registry/internal/discovery"
	"github.com/kapi-dev/kapi/schema"
)

// CustomResourceDefinitions (EXT-7): apiextensions.k8s.io/v1
// CustomResourceDefinitions are served as a resource, and each one's
// kinds are served as resources of their own while it lives:
//
//	POST customresourcedefinitions widgets.example.com (revision 42)
//	  → the CRD strategy defaults and validates it (kube's causes on 422),
//	    stores it with status.storedVersions = [its storage version]
//	  → AfterWrite runs the CRD feed's reconcile (crd_feed.go) of the
//	    CRD in the write's goroutine (crdFeed.sync): it accepts the names
//	    (NamesAccepted, or False with kube's reason on a conflict), sets
//	    Established, and registers a Resource per served version
//	  → so the 201 is sent once widgets.example.com is served: the next
//	    request may create a Widget; the feed, seeing revision 42, finds
//	    nothing left to do.
//
// Updates re-register the kinds (Replace: the next request uses the new
// schema, columns, subresources, selectable fields and versions). A
// delete adds the customresourcecleanup.apiextensions.k8s.io finalizer
// and the Terminating condition; the feed then deletes every instance
// through the write path, removes the finalizer (which lets the CRD go)
// and unregisters the kinds.

const (
	apiextensionsGroup = "apiextensions.k8s.io"
	// crdCleanupFinalizer is kube's finalizer of a CRD being deleted: its
	// instances are deleted before it goes.
	crdCleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"
)

// crdObject is the part of a stored CustomResourceDefinition the feed
// and the strategy read; the JSON names are kube's.
type crdObject struct {
	Metadata struct {
		Name              string            `json:"name"`
		UID               string            `json:"uid"`
		Generation        int64             `json:"generation"`
		DeletionTimestamp string            `json:"deletionTimestamp"`
		Finalizers        []string          `json:"finalizers"`
		Annotations       map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec   crdSpec   `json:"spec"`
	Status crdStatus `json:"status"`
}

type crdSpec struct {
	Group                 string         `json:"group"`
	Names                 crdNames       `json:"names"`
	Scope                 string         `json:"scope"`
	Versions              []crdVersion   `json:"versions"`
	Conversion            *crdConversion `json:"conversion,omitempty"`
	PreserveUnknownFields bool           `json:"preserveUnknownFields,omitempty"`
}

// crdNames are spec.names and status.acceptedNames, with kube's JSON
// (plural and kind are always written).
type crdNames struct {
	Plural     string   `json:"plural"`
	Singular   string   `json:"singular,omitempty"`
	ShortNames []string `json:"shortNames,omitempty"`
	Kind       string   `json:"kind"`
	ListKind   string   `json:"listKind,omitempty"`
	Categories []string `json:"categories,omitempty"`
}

type crdVersion struct {
	Name               string          `json:"name"`
	Served             bool            `json:"served"`
	Storage            bool            `json:"storage"`
	Deprecated         bool            `json:"deprecated,omitempty"`
	DeprecationWarning *string         `json:"deprecationWarning,omitempty"`
	Schema             json.RawMessage `json:"schema,omitempty"`
	Subresources       json.RawMessage `json:"subresources,omitempty"`
	Columns            []schema.Column `json:"additionalPrinterColumns,omitempty"`
	SelectableFields   []struct {
		JSONPath string `json:"jsonPath"`
	} `json:"selectableFields,omitempty"`
}

type crdConversion struct {
	Strategy string      `json:"strategy"`
	Webhook  *crdWebhook `json:"webhook,omitempty"`
}

type crdWebhook struct {
	ClientConfig             *webhookClientConfig `json:"clientConfig,omitempty"`
	ConversionReviewVersions []string             `json:"conversionReviewVersions"`
}

type webhookClientConfig struct {
	URL      *string                   `json:"url,omitempty"`
	Service  *webhook.ServiceReference `json:"service,omitempty"`
	CABundle []byte                    `json:"caBundle,omitempty"`
}

type crdStatus struct {
	Conditions     []crdCondition `json:"conditions"`
	AcceptedNames  crdNames       `json:"acceptedNames"`
	StoredVersions []string       `json:"storedVersions"`
}

type crdCondition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
	Reason             string `json:"reason,omitempty"`
	Message            string `json:"message,omitempty"`
}

// The condition types and statuses of a CRD.
const (
	condNamesAccepted = "NamesAccepted"
	condEstablished   = "Established"
	condTerminating   = "Terminating"
	condTrue          = "True"
	condFalse         = "False"
)

// readCRD reads obj as a CustomResourceDefinition.
func readCRD(obj Object) (*crdObject, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var c crdObject
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// toJSONValue is v as decoded JSON (maps, slices, strings, float64…).
func toJSONValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the CRD types always marshal
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// condition returns the condition of type t, or nil.
func (s *crdStatus) condition(t string) *crdCondition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			return &s.Conditions[i]
		}
	}
	return nil
}

// isTrue reports whether the condition of type t is True.
func (s *crdStatus) isTrue(t string) bool {
	c := s.condition(t)
	return c != nil && c.Status == condTrue
}

// setCondition sets c as kube's SetCRDCondition does: the transition
// time changes only with the status.
func (s *crdStatus) setCondition(c crdCondition, now string) {
	old := s.condition(c.Type)
	if old == nil {
		c.LastTransitionTime = now
		s.Conditions = append(s.Conditions, c)
		return
	}
	if old.Status != c.Status {
		c.LastTransitionTime = now
	} else {
		c.LastTransitionTime = old.LastTransitionTime
	}
	*old = c
}

// crdStorageVersion is the name of obj's version marked storage, or "":
// read from the decoded object, without readCRD's pass over all of it.
func crdStorageVersion(obj Object) string {
	spec, _ := obj["spec"].(map[string]any)
	versions, _ := spec["versions"].([]any)
	for _, v := range versions {
		if m, _ := v.(map[string]any); m["storage"] == true {
			name, _ := m["name"].(string)
			return name
		}
	}
	return ""
}

// readCRDStatus reads obj's status and its versions' names and storage
// marks (what kube's status strategy checks), without its schemas.
func readCRDStatus(obj Object) (crdStatus, []crdVersion, error) {
	var st crdStatus
	if raw, ok := obj["status"]; ok {
		b, err := json.Marshal(raw)
		if err != nil {
			return st, nil, err
		}
		if err := json.Unmarshal(b, &st); err != nil {
			return st, nil, err
		}
	}
	spec, _ := obj["spec"].(map[string]any)
	versions, _ := spec["versions"].([]any)
	out := make([]crdVersion, 0, len(versions))
	for _, v := range versions {
		m, _ := v.(map[string]any)
		name, _ := m["name"].(string)
		out = append(out, crdVersion{Name: name, Storage: m["storage"] == true})
	}
	return st, out, nil
}

// storageVersion is the name of the version marked storage, or "".
func (s *crdSpec) storageVersion() string {
	for _, v := range s.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

// crdResource is the apiextensions.k8s.io/v1 CustomResourceDefinitions
// resource, its lifecycle in its strategy (kube's).
func (r *Registry) crdResource() *Resource {
	res := &Resource{
		Group: apiextensionsGroup, Version: "v1", Kind: "CustomResourceDefinition", Plural: "customresourcedefinitions",
		Singular: "customresourcedefinition", ShortNames: []string{"crd", "crds"}, Categories: []string{"api-extensions"},
		Status: true, Generation: true, Schema: crdSchema, Protobuf: protobuf.CustomResourceDefinition,
		// kube-apiserver stores CRDs at v1beta1 still.
		StorageVersionHash: discovery.StorageVersionHash(apiextensionsGroup, "v1beta1", "CustomResourceDefinition"),
	}
	res.Strategy = Strategy{
		GenericMeta: true,
		Default: func(_ context.Context, obj Object) error {
			defaultCRD(obj)
			return nil
		},
		PrepareForCreate: func(_ context.Context, obj Object) error {
			st := crdStatus{AcceptedNames: crdNames{}}
			if v := crdStorageVersion(obj); v != "" {
				st.StoredVersions = []string{v}
			}
			obj["status"] = toJSONValue(st)
			return nil
		},
		PrepareForUpdate: func(_ context.Context, obj, _ Object) error {
			st, _ := obj["status"].(map[string]any)
			l, _ := st["storedVersions"].([]any)
			if v := crdStorageVersion(obj); v != "" && !slices.Contains(l, any(v)) {
				if st == nil {
					st = map[string]any{}
					obj["status"] = st
				}
				st["storedVersions"] = append(l, v)
			}
			return nil
		},
		ValidateCreate: func(_ context.Context, obj Object) []FieldError { return r.validateCRD(obj, nil) },
		ValidateUpdate: func(_ context.Context, obj, old Object) []FieldError {
			if reflect.DeepEqual(obj["spec"], old["spec"]) {
				// A status write (the feed's): the spec was checked when
				// it was written; the status is checked as kube's status
				// strategy does.
				return validateCRDStatus(obj)
			}
			return r.validateCRD(obj, old)
		},
		// A CRD keeps the cleanup finalizer until its instances are gone.
		Finalizers: func(_ context.Context, obj Object) []string {
			if obj.deleting() {
				return nil
			}
			return []string{crdCleanupFinalizer}
		},
		PrepareForDelete: func(_ context.Context, obj Object) error {
			meta := obj.Meta()
			// kube's CRD delete sets deletionTimestamp alone: no grace
			// period, and generation kept.
			if _, first := meta["deletionGracePeriodSeconds"]; first {
				delete(meta, "deletionGracePeriodSeconds")
				if g := generation(obj); g > 1 {
					meta["generation"] = g - 1
				}
			}
			if !slices.Contains(obj.Finalizers(), crdCleanupFinalizer) {
				l, _ := meta["finalizers"].([]any)
				meta["finalizers"] = append(l, crdCleanupFinalizer)
			}
			c, err := readCRD(obj)
			if err != nil {
				return nil
			}
			c.Status.setCondition(crdCondition{Type: condTerminating, Status: condTrue, Reason: "InstanceDeletionPending",
				Message: "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"}, r.timestamp())
			obj["status"] = toJSONValue(c.Status)
			return nil
		},
		AfterWrite: func(ctx context.Context, obj Object, rev uint64) { r.crds.sync(ctx, obj.Name(), rev) },
	}
	return res
}

// validateCRD is kube's validation of a CRD (validateCRD), then the
// check that its kinds can be served here: each served version's
// resource compiles (its CEL rules with Options.CEL, its field manager).
func (r *Registry) validateCRD(obj, old Object) []FieldError {
	if errs := validateCRD(obj, old); len(errs) > 0 {
		return errs
	}
	crd, errs := servable(obj)
	if len(errs) > 0 {
		return errs
	}
	spec, _ := obj["spec"].(map[string]any)
	versions, _ := spec["versions"].([]any)
	schemaOf := func(v any) any {
		m, _ := v.(map[string]any)
		return m["schema"]
	}
	hoisted := len(versions) > 0 // every version has the same schema
	for _, v := range versions {
		hoisted = hoisted && reflect.DeepEqual(schemaOf(v), schemaOf(versions[0]))
	}
	resources := FromCRD(crd)
	for _, res := range resources {
		err := r.prepare(res)
		if err == nil {
			continue
		}
		i := slices.IndexFunc(crd.Versions, func(v schema.Version) bool { return v.Name == res.Version })
		var rules ruleErrors
		switch {
		case errors.As(err, &rules) && hoisted:
			// kube checks a schema all versions share once, as its
			// internal type's spec.validation.
			for _, fe := range rules.FieldErrors() {
				fe.Field = "spec.validation." + fe.Field
				errs = append(errs, fe)
			}
			return errs
		case errors.As(err, &rules):
			for _, fe := range rules.FieldErrors() {
				fe.Field = fmt.Sprintf("spec.versions[%d].schema.", i) + fe.Field
				errs = append(errs, fe)
			}
		default:
			errs = append(errs, FieldError{Type: "FieldValueInvalid", Field: fmt.Sprintf("spec.versions[%d].schema.openAPIV3Schema", i), Value: "", Detail: err.Error()})
		}
	}
	if len(errs) == 0 {
		r.crds.remember(obj, crd, resources) // the feed serves them once stored
	}
	return errs
}

// ruleErrors is an Options.CEL compiler's error that lists kube's field
// errors for a schema's rules (the cel module's *CompileError), with
// paths from openAPIV3Schema: a CRD's create answers them as its causes,
// as kube's CRD validation does (their cost limits included).
type ruleErrors interface {
	error
	FieldErrors() []FieldError
}

// defaultCRD sets kube's defaults of a v1 CRD: names.singular and
// listKind, conversion strategy None, a webhook service's port 443.
func defaultCRD(obj Object) {
	spec, _ := obj["spec"].(map[string]any)
	if spec == nil {
		return
	}
	// What kube's typed decoding drops (empty lists and zero numbers of
	// omitempty fields) is dropped here too.
	dropEmpty := func(m map[string]any, keys ...string) {
		for _, k := range keys {
			switch v := m[k].(type) {
			case []any:
				if len(v) == 0 {
					delete(m, k)
				}
			case string:
				if v == "" {
					delete(m, k)
				}
			case nil:
				delete(m, k)
			}
		}
	}
	vs, _ := spec["versions"].([]any)
	for _, v := range vs {
		vm, ok := v.(map[string]any)
		if !ok {
			continue
		}
		dropEmpty(vm, "additionalPrinterColumns", "selectableFields")
		cols, _ := vm["additionalPrinterColumns"].([]any)
		for _, c := range cols {
			if cm, ok := c.(map[string]any); ok {
				dropEmpty(cm, "description", "format")
				if p, ok := cm["priority"]; ok && fmt.Sprint(p) == "0" {
					delete(cm, "priority")
				}
			}
		}
	}
	if names, ok := spec["names"].(map[string]any); ok {
		dropEmpty(names, "shortNames", "categories")
		kind, _ := names["kind"].(string)
		if s, _ := names["singular"].(string); s == "" && kind != "" {
			names["singular"] = toLower(kind)
		}
		if l, _ := names["listKind"].(string); l == "" && kind != "" {
			names["listKind"] = kind + "List"
		}
	}
	conv, _ := spec["conversion"].(map[string]any)
	if conv == nil {
		spec["conversion"] = map[string]any{"strategy": "None"}
		return
	}
	if wh, ok := conv["webhook"].(map[string]any); ok {
		if cc, ok := wh["clientConfig"].(map[string]any); ok {
			if svc, ok := cc["service"].(map[string]any); ok {
				if _, ok := svc["port"]; !ok {
					svc["port"] = int64(443)
				}
			}
		}
	}
}

func toLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// crdSchema is the schema of a CustomResourceDefinition as kapi serves
// it: enough for strategic merge patch and server-side apply to merge as
// kube's does (versions atomic, conditions a map by type); spec and
// status otherwise keep what they are given, and validateCRD checks them.
var crdSchema = func() *schema.Schema {
	s, err := schema.FromJSON(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"apiVersion": map[string]any{"type": "string"},
			"kind":       map[string]any{"type": "string"},
			// default {} marks the non-pointer structs of kube's Go type,
			// as kube's OpenAPI does: its field manager records a create
			// from the type's zero value, which holds them (patch.Typed).
			"metadata": map[string]any{"type": "object", "default": map[string]any{}},
			"spec": map[string]any{
				"type": "object", "x-kubernetes-preserve-unknown-fields": true, "default": map[string]any{},
				"properties": map[string]any{
					"names": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true, "default": map[string]any{}},
					"versions": map[string]any{"type": "array", "x-kubernetes-list-type": "atomic",
						"items": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
				},
			},
			"status": map[string]any{
				"type": "object", "x-kubernetes-preserve-unknown-fields": true, "default": map[string]any{},
				"properties": map[string]any{
					"conditions": map[string]any{"type": "array", "nullable": true, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"type"},
						"items": map[string]any{"type": "object", "required": []any{"type"}, "x-kubernetes-preserve-unknown-fields": true,
							"properties": map[string]any{"type": map[string]any{"type": "string"}}}},
				},
			},
		},
	})
	if err != nil {
		panic(fmt.Sprintf("registry: the CustomResourceDefinition schema: %v", err))
	}
	return s
}()
