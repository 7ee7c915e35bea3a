package validation

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
)

// MetaOptions says which rules apply to an object's metadata.
type MetaOptions struct {
	// Namespaced: metadata.namespace is required (a DNS-1123 label);
	// otherwise it is forbidden.
	Namespaced bool
	// NameIsLabel: names are DNS-1123 labels (namespaces) rather than
	// DNS-1123 subdomains.
	NameIsLabel bool
	// NameFunc, when set, replaces the name rule. It also checks
	// generateName, with a trailing "-" masked as kube does.
	NameFunc func(name string) []string
	// StandardFinalizers: a finalizer without a "/" must be one of kube's
	// own (kubernetes, orphan, foregroundDeletion), as kube's built-in
	// kinds require.
	StandardFinalizers bool
}

func (o MetaOptions) checkName(name string, prefix bool) []string {
	if prefix {
		name = maskTrailingDash(name)
	}
	switch {
	case o.NameFunc != nil:
		return o.NameFunc(name)
	case o.NameIsLabel:
		return IsDNS1123Label(name)
	}
	return IsDNS1123Subdomain(name)
}

// Well-known finalizers that cannot be set together.
const (
	finalizerOrphan     = "orphan"
	finalizerForeground = "foregroundDeletion"
)

// ValidateObjectMeta checks the decoded JSON "metadata" object of an object
// being created (and, through ValidateObjectMetaUpdate, updated), in kube's
// order: generateName, name, namespace, generation, labels, annotations,
// ownerReferences, finalizers. A missing name is allowed when generateName
// is set (the caller generates the name). Names that pass the name rule must
// also be usable as a URL path segment. Map keys are checked in sorted order,
// so the result is deterministic.
func ValidateObjectMeta(meta map[string]any, opts MetaOptions) []Error {
	var errs []Error
	name, nameErrs := str(meta, "name")
	errs = append(errs, nameErrs...)
	generate, genErrs := str(meta, "generateName")
	errs = append(errs, genErrs...)

	if generate != "" {
		msgs := opts.checkName(generate, true)
		if len(msgs) == 0 {
			msgs = IsPathSegmentPrefix(generate)
		}
		errs = appendInvalid(errs, "metadata.generateName", generate, msgs)
	}
	switch {
	case name == "" && generate == "" && len(nameErrs) == 0:
		errs = append(errs, Error{Type: TypeRequired, Field: "metadata.name", Detail: "name or generateName is required"})
	case name != "":
		msgs := opts.checkName(name, false)
		if len(msgs) == 0 {
			msgs = IsPathSegmentName(name)
		}
		errs = appendInvalid(errs, "metadata.name", name, msgs)
	}

	ns, nsErrs := str(meta, "namespace")
	errs = append(errs, nsErrs...)
	switch {
	case len(nsErrs) > 0:
	case opts.Namespaced && ns == "":
		errs = append(errs, Error{Type: TypeRequired, Field: "metadata.namespace"})
	case opts.Namespaced:
		errs = appendInvalid(errs, "metadata.namespace", ns, IsDNS1123Label(ns))
	case ns != "":
		errs = append(errs, Error{Type: TypeForbidden, Field: "metadata.namespace", Detail: "not allowed on this type"})
	}

	if g, ok := meta["generation"]; ok && g != nil {
		switch n, isInt := integer(g); {
		case !isInt:
			errs = append(errs, Error{Type: TypeInvalid, Field: "metadata.generation", Value: g, Detail: "must be an integer"})
		case n < 0:
			errs = append(errs, Error{Type: TypeInvalid, Field: "metadata.generation", Value: n, Detail: "must be greater than or equal to 0"})
		}
	}

	errs = append(errs, validateLabels(meta)...)
	errs = append(errs, validateAnnotations(meta)...)
	errs = append(errs, validateOwnerReferences(meta)...)
	errs = append(errs, validateFinalizers(meta, opts.StandardFinalizers)...)
	return errs
}

// ValidateObjectMetaUpdate checks the metadata of an update against the
// stored object's, then the new metadata as ValidateObjectMeta does: no new
// finalizers once deletion started, resourceVersion given (the caller fills it
// in for unconditional updates first), generation not decremented, and
// name, namespace, uid, creationTimestamp, deletionTimestamp and
// deletionGracePeriodSeconds unchanged.
func ValidateObjectMetaUpdate(newMeta, oldMeta map[string]any, opts MetaOptions) []Error {
	var errs []Error
	if oldMeta["deletionTimestamp"] != nil {
		oldF, _ := strs(oldMeta, "finalizers")
		newF, _ := strs(newMeta, "finalizers")
		var extra []string
		for _, f := range newF {
			if !slices.Contains(oldF, f) && !slices.Contains(extra, f) {
				extra = append(extra, f)
			}
		}
		if len(extra) > 0 {
			slices.Sort(extra)
			errs = append(errs, Error{Type: TypeForbidden, Field: "metadata.finalizers",
				Detail: fmt.Sprintf("no new finalizers can be added if the object is being deleted, found new finalizers %#v", extra)})
		}
	}
	if rv, _ := newMeta["resourceVersion"].(string); rv == "" {
		errs = append(errs, Error{Type: TypeInvalid, Field: "metadata.resourceVersion", Value: "", Detail: "must be specified for an update"})
	}
	newGen, _ := integer(newMeta["generation"])
	if oldGen, _ := integer(oldMeta["generation"]); newGen < oldGen {
		errs = append(errs, Error{Type: TypeInvalid, Field: "metadata.generation", Value: newGen, Detail: "must not be decremented"})
	}
	for _, k := range []string{"name", "namespace", "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"} {
		nv, ov := normal(newMeta[k]), normal(oldMeta[k])
		if !reflect.DeepEqual(nv, ov) {
			errs = append(errs, Error{Type: TypeInvalid, Field: "metadata." + k, Value: nv, Detail: "field is immutable"})
		}
	}
	return append(errs, ValidateObjectMeta(newMeta, opts)...)
}

// normal makes absent fields and their zero values compare equal and
// integral numbers compare by value.
func normal(v any) any {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	}
	if n, ok := integer(v); ok {
		return n
	}
	return v
}

func appendInvalid(errs []Error, field string, value any, msgs []string) []Error {
	for _, m := range msgs {
		errs = append(errs, Error{Type: TypeInvalid, Field: field, Value: value, Detail: m})
	}
	return errs
}

// str reads an optional string field; null counts as absent.
func str(meta map[string]any, key string) (string, []Error) {
	switch v := meta[key].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	default:
		return "", []Error{{Type: TypeInvalid, Field: "metadata." + key, Value: v, Detail: "must be a string"}}
	}
}

// strs reads an optional list of strings.
func strs(meta map[string]any, key string) ([]string, []Error) {
	switch v := meta[key].(type) {
	case nil:
		return nil, nil
	case []string:
		return v, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			s, ok := x.(string)
			if !ok {
				return nil, []Error{{Type: TypeInvalid, Field: "metadata." + key, Value: v, Detail: "must be a list of strings"}}
			}
			out = append(out, s)
		}
		return out, nil
	default:
		return nil, []Error{{Type: TypeInvalid, Field: "metadata." + key, Value: v, Detail: "must be a list of strings"}}
	}
}

// stringMap reads an optional object of strings, returning its keys sorted.
func stringMap(meta map[string]any, key string) (map[string]string, []string, []Error) {
	bad := []Error{{Type: TypeInvalid, Field: "metadata." + key, Value: meta[key], Detail: "must be an object with string values"}}
	var m map[string]string
	switch v := meta[key].(type) {
	case nil:
		return nil, nil, nil
	case map[string]string:
		m = v
	case map[string]any:
		m = make(map[string]string, len(v))
		for k, x := range v {
			s, ok := x.(string)
			if !ok {
				return nil, nil, bad
			}
			m[k] = s
		}
	default:
		return nil, nil, bad
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return m, keys, nil
}

// integer reads a JSON number that is an integer.
func integer(v any) (int64, bool) {
	switch t := v.(type) {
	case int:
		return int64(t), true
	case int64:
		return t, true
	case int32:
		return int64(t), true
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1<<63 {
			return int64(t), true
		}
	case json.Number:
		n, err := t.Int64()
		return n, err == nil
	}
	return 0, false
}

func validateLabels(meta map[string]any) []Error {
	labels, keys, errs := stringMap(meta, "labels")
	for _, k := range keys {
		errs = appendInvalid(errs, "metadata.labels", k, IsQualifiedName(k))
		errs = appendInvalid(errs, "metadata.labels", labels[k], IsValidLabelValue(labels[k]))
	}
	return errs
}

func validateAnnotations(meta map[string]any) []Error {
	annotations, keys, errs := stringMap(meta, "annotations")
	total := 0
	for _, k := range keys {
		// kube lowercases annotation keys before checking them
		errs = appendInvalid(errs, "metadata.annotations", k, IsQualifiedName(strings.ToLower(k)))
		total += len(k) + len(annotations[k])
	}
	if total > TotalAnnotationSizeLimit {
		errs = append(errs, Error{Type: TypeTooLong, Field: "metadata.annotations",
			Detail: fmt.Sprintf("may not be more than %d bytes", TotalAnnotationSizeLimit)})
	}
	return errs
}

func validateFinalizers(meta map[string]any, standard bool) []Error {
	finalizers, errs := strs(meta, "finalizers")
	for i, f := range finalizers {
		errs = appendInvalid(errs, "metadata.finalizers", f, IsQualifiedName(f))
		// kube's check of its built-in kinds' finalizers names the index.
		if standard && !strings.Contains(f, "/") && !slices.Contains([]string{"kubernetes", finalizerOrphan, finalizerForeground}, f) {
			errs = append(errs, Error{Type: TypeInvalid, Field: fmt.Sprintf("metadata.finalizers[%d]", i), Value: f, Detail: "name is neither a standard finalizer name nor is it fully qualified"})
		}
	}
	if slices.Contains(finalizers, finalizerOrphan) && slices.Contains(finalizers, finalizerForeground) {
		errs = append(errs, Error{Type: TypeInvalid, Field: "metadata.finalizers", Value: finalizers,
			Detail: fmt.Sprintf("finalizer %s and %s cannot be both set", finalizerOrphan, finalizerForeground)})
	}
	return errs
}

func validateOwnerReferences(meta map[string]any) []Error {
	raw, ok := meta["ownerReferences"]
	if !ok || raw == nil {
		return nil
	}
	refs, ok := raw.([]any)
	if !ok {
		return []Error{{Type: TypeInvalid, Field: "metadata.ownerReferences", Value: raw, Detail: "must be a list of objects"}}
	}
	var errs []Error
	firstController := ""
	for i, r := range refs {
		path := fmt.Sprintf("metadata.ownerReferences[%d]", i)
		ref, ok := r.(map[string]any)
		if !ok {
			errs = append(errs, Error{Type: TypeInvalid, Field: path, Value: r, Detail: "must be an object"})
			continue
		}
		field := func(k string) string {
			s, ok := ref[k].(string)
			if !ok && ref[k] != nil {
				errs = append(errs, Error{Type: TypeInvalid, Field: path + "." + k, Value: ref[k], Detail: "must be a string"})
			}
			return s
		}
		apiVersion, kind, name, uid := field("apiVersion"), field("kind"), field("name"), field("uid")
		group, version, gvOK := parseGroupVersion(apiVersion)
		if apiVersion == "" {
			errs = append(errs, Error{Type: TypeRequired, Field: path + ".apiVersion", Detail: "must not be empty"})
		} else if !gvOK || version == "" {
			errs = append(errs, Error{Type: TypeInvalid, Field: path + ".apiVersion", Value: apiVersion, Detail: "must be <group>/<version> or <version>"})
		}
		for _, req := range []struct{ k, v string }{{"kind", kind}, {"name", name}, {"uid", uid}} {
			if req.v == "" {
				errs = append(errs, Error{Type: TypeRequired, Field: path + "." + req.k, Detail: "must not be empty"})
			}
		}
		if group == "" && version == "v1" && kind == "Event" {
			errs = append(errs, Error{Type: TypeInvalid, Field: path, Value: ref, Detail: "/v1, Kind=Event is disallowed from being an owner"})
		}
		if c, _ := ref["controller"].(bool); c {
			cur := kind + "/" + name
			if firstController == "" {
				firstController = cur
			} else {
				errs = append(errs, Error{Type: TypeInvalid, Field: "metadata.ownerReferences", Value: ownerRefsValue(refs),
					Detail: fmt.Sprintf("Only one reference can have Controller set to true. Found \"true\" in references for %v and %v", firstController, cur)})
			}
		}
	}
	return errs
}

// ownerReference is metav1.OwnerReference's JSON, its fields in the Go
// struct's order.
type ownerReference struct {
	APIVersion         string `json:"apiVersion"`
	Kind               string `json:"kind"`
	Name               string `json:"name"`
	UID                string `json:"uid"`
	Controller         *bool  `json:"controller,omitempty"`
	BlockOwnerDeletion *bool  `json:"blockOwnerDeletion,omitempty"`
}

// ownerRefsValue is refs as kube prints them in an error: its Go
// OwnerReferences in JSON, fields in the struct's order
// ([{"apiVersion":"v1","kind":"ConfigMap","name":"o","uid":"…","controller":true}]);
// refs itself if they are not OwnerReferences.
func ownerRefsValue(refs []any) any {
	b, err := json.Marshal(refs)
	if err != nil {
		return refs
	}
	var typed []ownerReference
	if err := json.Unmarshal(b, &typed); err != nil {
		return refs
	}
	out, err := json.Marshal(typed)
	if err != nil {
		return refs
	}
	return json.RawMessage(out)
}

// parseGroupVersion is kube's schema.ParseGroupVersion.
func parseGroupVersion(s string) (group, version string, ok bool) {
	if s == "" || s == "/" {
		return "", "", true
	}
	switch strings.Count(s, "/") {
	case 0:
		return "", s, true
	case 1:
		g, v, _ := strings.Cut(s, "/")
		return g, v, true
	}
	return "", "", false
}
