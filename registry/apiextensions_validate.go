package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi/internal/validation"
	"github.com/kapi-dev/kapi/registry/admission/webhook"
	"github.com/kapi-dev/kapi/schema"
)

// validateCRD is kube's validation of a CustomResourceDefinition
// (k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation),
// with its fields, types and messages, for what kapi serves: the name,
// group, scope, names, versions, schemas (structural), subresources,
// printer columns, selectable fields, conversion, storedVersions and the
// api-approved annotation of protected groups; on update, the group and
// plural cannot change, nor the scope and kind once established. A CRD
// this passes and servable reads can have its kinds served.
//
// Worked example: a v1 CRD whose one version's schema has a property
// without a type answers 422 with the cause
//
//	spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields
//
// ("spec.validation", as kube's: when every version has the same schema,
// kube checks it as the internal type's one top-level schema).
func validateCRD(obj, old Object) []FieldError {
	c, err := readCRD(obj)
	if err != nil {
		return []FieldError{{Type: validation.TypeInvalid, Field: "spec", Value: "", Detail: err.Error()}}
	}
	var errs []FieldError
	add := func(typ, field string, value any, detail string) {
		errs = append(errs, FieldError{Type: typ, Field: field, Value: value, Detail: detail})
	}
	sp := c.Spec
	// The name is checked on create only (kube's ValidateCustomResourceDefinition;
	// on update, the names and group it is made of are immutable).
	if want := sp.Names.Plural + "." + sp.Group; c.Metadata.Name != want && old == nil {
		add(validation.TypeInvalid, "metadata.name", c.Metadata.Name, `must be spec.names.plural+"."+spec.group`)
	}
	switch {
	case sp.Group == "":
		add(validation.TypeRequired, "spec.group", "", "")
	case len(validation.IsDNS1123Subdomain(sp.Group)) > 0:
		add(validation.TypeInvalid, "spec.group", sp.Group, strings.Join(validation.IsDNS1123Subdomain(sp.Group), ","))
	case !strings.Contains(sp.Group, "."):
		add(validation.TypeInvalid, "spec.group", sp.Group, "should be a domain with at least one dot")
	}
	switch sp.Scope {
	case "":
		add(validation.TypeRequired, "spec.scope", "", "")
	case "Cluster", "Namespaced":
	default:
		add(validation.TypeNotSupported, "spec.scope", sp.Scope, `supported values: "Cluster", "Namespaced"`)
	}

	// Per-version schemas, subresources and columns that are all the same
	// are kube's internal top-level ones: their errors are reported there.
	sameSchemas, sameSubresources, sameColumns := len(sp.Versions) > 0, len(sp.Versions) > 0, len(sp.Versions) > 0
	for _, v := range sp.Versions[min(1, len(sp.Versions)):] {
		sameSchemas = sameSchemas && bytes.Equal(compactJSON(v.Schema), compactJSON(sp.Versions[0].Schema))
		sameSubresources = sameSubresources && bytes.Equal(compactJSON(v.Subresources), compactJSON(sp.Versions[0].Subresources))
		sameColumns = sameColumns && reflect.DeepEqual(v.Columns, sp.Versions[0].Columns)
	}
	if len(sp.Versions) == 0 {
		add(validation.TypeInvalid, "spec.versions", []any{}, "must have exactly one version marked as storage version")
	}
	storage, seen, unique := 0, map[string]bool{}, true
	schemaReported := false
	for i, v := range sp.Versions {
		p := fmt.Sprintf("spec.versions[%d]", i)
		if v.Storage {
			storage++
		}
		if seen[v.Name] {
			unique = false
		}
		seen[v.Name] = true
		if msgs := dns1035(v.Name); len(msgs) > 0 {
			add(validation.TypeInvalid, p+".name", v.Name, strings.Join(msgs, ","))
			if i == 0 {
				// kube's internal spec.version is the first version's name.
				add(validation.TypeInvalid, "spec.version", v.Name, strings.Join(msgs, ","))
			}
		}
		schemaPath := p + ".schema.openAPIV3Schema"
		if sameSchemas {
			schemaPath = "spec.validation.openAPIV3Schema"
		}
		raw := schemaOf(v.Schema)
		switch {
		case raw == nil && v.Served:
			add(validation.TypeRequired, p+".schema.openAPIV3Schema", "", "") // v1 requires structural schemas
		case raw != nil && !(sameSchemas && schemaReported):
			errs = append(errs, validateCRDSchema(raw, schemaPath)...)
			schemaReported = true
		}
		subPath := p + ".subresources"
		if sameSubresources {
			subPath = "spec.subresources"
		}
		if i == 0 || !sameSubresources {
			errs = append(errs, validateSubresources(v.Subresources, subPath)...)
		}
		colPath := p + ".additionalPrinterColumns"
		if sameColumns {
			colPath = "spec.additionalPrinterColumns"
		}
		if i == 0 || !sameColumns {
			for j, col := range v.Columns {
				errs = append(errs, validateColumn(col, fmt.Sprintf("%s[%d]", colPath, j))...)
			}
		}
	}
	errs = append(errs, validateSelectableFields(sp.Versions, sameSchemas)...)
	if !unique {
		add(validation.TypeInvalid, "spec.versions", versionsValue(sp.Versions, sameSchemas, sameSubresources, sameColumns), "must contain unique version names")
	}
	if storage != 1 && len(sp.Versions) > 0 {
		add(validation.TypeInvalid, "spec.versions", versionsValue(sp.Versions, sameSchemas, sameSubresources, sameColumns), "must have exactly one version marked as storage version")
	}
	for _, f := range [...]struct{ name, value string }{{"plural", sp.Names.Plural}, {"singular", sp.Names.Singular}, {"kind", sp.Names.Kind}, {"listKind", sp.Names.ListKind}} {
		if f.value == "" {
			add(validation.TypeRequired, "spec.names."+f.name, "", "")
		}
	}
	errs = append(errs, validateNames(sp.Names, "spec.names")...)
	if sp.PreserveUnknownFields {
		add(validation.TypeInvalid, "spec.preserveUnknownFields", true, "must be false")
	}
	errs = append(errs, validateConversion(sp.Conversion, "spec.conversion")...)
	errs = append(errs, validateNames(c.Status.AcceptedNames, "status.acceptedNames")...)
	errs = append(errs, validateStoredVersions(c.Status.StoredVersions, sp.Versions)...)
	if protectedGroup(sp.Group) && c.Metadata.Annotations["api-approved.kubernetes.io"] == "" {
		add(validation.TypeRequired, "metadata.annotations[api-approved.kubernetes.io]", "",
			`protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111`)
	}
	if old != nil {
		o, err := readCRD(old)
		if err == nil {
			if sp.Group != o.Spec.Group {
				add(validation.TypeInvalid, "spec.group", sp.Group, "field is immutable")
			}
			if sp.Names.Plural != o.Spec.Names.Plural {
				add(validation.TypeInvalid, "spec.names.plural", sp.Names.Plural, "field is immutable")
			}
			if o.Status.isTrue(condEstablished) {
				if sp.Scope != o.Spec.Scope {
					add(validation.TypeInvalid, "spec.scope", sp.Scope, "field is immutable")
				}
				if sp.Names.Kind != o.Spec.Names.Kind {
					add(validation.TypeInvalid, "spec.names.kind", sp.Names.Kind, "field is immutable")
				}
			}
		}
	}
	return errs
}

// validateCRDStatus is kube's validation of a CRD's status: its accepted
// names, and its storedVersions against its versions.
func validateCRDStatus(obj Object) []FieldError {
	st, versions, err := readCRDStatus(obj)
	if err != nil {
		return []FieldError{{Type: validation.TypeInvalid, Field: "status", Value: "", Detail: err.Error()}}
	}
	errs := validateNames(st.AcceptedNames, "status.acceptedNames")
	return append(errs, validateStoredVersions(st.StoredVersions, versions)...)
}

// servable reads the CRD as serving its kinds takes (schema.ParseCRD),
// reporting what validateCRD does not check itself.
func servable(obj Object) (schema.CRD, []FieldError) {
	b, err := json.Marshal(obj)
	if err != nil {
		return schema.CRD{}, []FieldError{{Type: validation.TypeInvalid, Field: "spec", Value: "", Detail: err.Error()}}
	}
	crd, err := schema.ParseCRD(b)
	if err != nil {
		var e *schema.Error
		if errors.As(err, &e) {
			return crd, []FieldError{{Type: validation.TypeInvalid, Field: kubePath(e.Path), Value: "", Detail: e.Err.Error()}}
		}
		return crd, []FieldError{{Type: validation.TypeInvalid, Field: "spec", Value: "", Detail: err.Error()}}
	}
	return crd, nil
}

// schemaOf is a version's schema.openAPIV3Schema, or nil.
func schemaOf(raw json.RawMessage) map[string]any {
	var s struct {
		OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber() // a default of 1 is an integer, of 1.5 a number, as kube reads them
	if len(raw) == 0 || d.Decode(&s) != nil {
		return nil
	}
	return s.OpenAPIV3Schema
}

func compactJSON(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// validateCRDSchema checks a version's schema as kapi reads it (structural,
// as kube requires of v1 CRDs), with the error at kube's path.
func validateCRDSchema(raw map[string]any, path string) []FieldError {
	if errs := structural(raw, path, "at the root"); len(errs) > 0 {
		return errs
	}
	if t, _ := raw["type"].(string); t != "object" {
		return []FieldError{{Type: validation.TypeInvalid, Field: path + ".type", Value: t, Detail: `must be object at the root`}}
	}
	parsed, err := schema.FromJSON(raw)
	if err == nil {
		return validateDefaults(parsed, path)
	}
	var e *schema.Error
	if !errors.As(err, &e) {
		return []FieldError{{Type: validation.TypeInvalid, Field: path, Value: "", Detail: err.Error()}}
	}
	field := path
	if p := kubePath(e.Path); p != "" {
		if p[0] != '[' {
			field += "."
		}
		field += p
	}
	msg := e.Err.Error()
	if strings.Contains(msg, "type") && strings.Contains(msg, "required") || strings.HasSuffix(field, ".type") && strings.Contains(msg, "missing") {
		return []FieldError{{Type: validation.TypeRequired, Field: strings.TrimSuffix(field, ".type") + ".type", Value: "", Detail: "must not be empty for specified object fields"}}
	}
	return []FieldError{{Type: validation.TypeInvalid, Field: field, Value: "", Detail: msg}}
}

// structural is the part of kube's structural schema check kapi's
// schema parser does not make: every node has a type, unless it is
// x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields.
func structural(s map[string]any, path, level string) []FieldError {
	var errs []FieldError
	t, _ := s["type"].(string)
	ios, _ := s["x-kubernetes-int-or-string"].(bool)
	pu, _ := s["x-kubernetes-preserve-unknown-fields"].(bool)
	if t == "" && !ios && !pu {
		errs = append(errs, FieldError{Type: validation.TypeRequired, Field: path + ".type", Value: "", Detail: "must not be empty " + level})
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for _, k := range slices.Sorted(maps.Keys(props)) {
			if m, ok := props[k].(map[string]any); ok {
				errs = append(errs, structural(m, path+".properties["+k+"]", "for specified object fields")...)
			}
		}
	}
	if m, ok := s["items"].(map[string]any); ok {
		errs = append(errs, structural(m, path+".items", "for specified array items")...)
	}
	if m, ok := s["additionalProperties"].(map[string]any); ok {
		errs = append(errs, structural(m, path+".additionalProperties", "for specified object fields")...)
	}
	return errs
}

var propertiesSeg = regexp.MustCompile(`(^|\.)(properties|patternProperties|definitions|dependencies)\.([^.\[]+)`)

// kubePath writes a schema path as kube's field paths do:
// "properties.spec.type" is "properties[spec].type".
func kubePath(p string) string {
	for {
		q := propertiesSeg.ReplaceAllString(p, "$1$2[$3]")
		if q == p {
			return p
		}
		p = q
	}
}

func validateSubresources(raw json.RawMessage, path string) []FieldError {
	var sr struct {
		Scale *struct {
			SpecReplicasPath   string  `json:"specReplicasPath"`
			StatusReplicasPath string  `json:"statusReplicasPath"`
			LabelSelectorPath  *string `json:"labelSelectorPath"`
		} `json:"scale"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &sr) != nil || sr.Scale == nil {
		return nil
	}
	var errs []FieldError
	sc, p := sr.Scale, path+".scale"
	switch {
	case sc.SpecReplicasPath == "":
		errs = append(errs, FieldError{Type: validation.TypeRequired, Field: p + ".specReplicasPath", Value: ""})
	case !strings.HasPrefix(sc.SpecReplicasPath, ".spec."):
		errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: p + ".specReplicasPath", Value: sc.SpecReplicasPath, Detail: "should be a json path under .spec"})
	}
	switch {
	case sc.StatusReplicasPath == "":
		errs = append(errs, FieldError{Type: validation.TypeRequired, Field: p + ".statusReplicasPath", Value: ""})
	case !strings.HasPrefix(sc.StatusReplicasPath, ".status."):
		errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: p + ".statusReplicasPath", Value: sc.StatusReplicasPath, Detail: "should be a json path under .status"})
	}
	if l := sc.LabelSelectorPath; l != nil && *l != "" && !strings.HasPrefix(*l, ".spec.") && !strings.HasPrefix(*l, ".status.") {
		errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: p + ".labelSelectorPath", Value: *l, Detail: "should be a json path under either .spec or .status"})
	}
	return errs
}

var (
	columnTypes   = "boolean,date,integer,number,string"
	columnFormats = "byte,date,date-time,double,float,int32,int64,name,password"
)

func validateColumn(c schema.Column, path string) []FieldError {
	var errs []FieldError
	if c.Name == "" {
		errs = append(errs, FieldError{Type: validation.TypeRequired, Field: path + ".name", Value: ""})
	}
	switch {
	case c.Type == "":
		errs = append(errs, FieldError{Type: validation.TypeRequired, Field: path + ".type", Value: "", Detail: "must be one of " + columnTypes})
	case !strings.Contains(","+columnTypes+",", ","+c.Type+","):
		errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: path + ".type", Value: c.Type, Detail: "must be one of " + columnTypes})
	}
	if c.Format != "" && !strings.Contains(","+columnFormats+",", ","+c.Format+",") {
		errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: path + ".format", Value: c.Format, Detail: "must be one of " + columnFormats})
	}
	if c.JSONPath == "" {
		errs = append(errs, FieldError{Type: validation.TypeRequired, Field: path + ".JSONPath", Value: ""})
	} else if !strings.HasPrefix(c.JSONPath, ".") {
		errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: path + ".JSONPath", Value: c.JSONPath, Detail: "must be a simple json path starting with ."})
	}
	return errs
}

func validateNames(n crdNames, path string) []FieldError {
	var errs []FieldError
	check := func(field, value string, lower bool, prefix string) {
		v := value
		if lower {
			v = toLower(v)
		}
		if msgs := dns1035(v); value != "" && len(msgs) > 0 {
			errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: path + "." + field, Value: value, Detail: prefix + strings.Join(msgs, ",")})
		}
	}
	check("plural", n.Plural, false, "")
	check("singular", n.Singular, false, "")
	check("kind", n.Kind, true, "may have mixed case, but should otherwise match: ")
	check("listKind", n.ListKind, true, "may have mixed case, but should otherwise match: ")
	for i, s := range n.ShortNames {
		if msgs := dns1035(s); len(msgs) > 0 {
			errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: fmt.Sprintf("%s.shortNames[%d]", path, i), Value: s, Detail: strings.Join(msgs, ",")})
		}
	}
	if n.Kind != "" && n.Kind == n.ListKind {
		errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: path + ".listKind", Value: n.ListKind, Detail: "kind and listKind may not be the same"})
	}
	for i, s := range n.Categories {
		if msgs := dns1035(s); len(msgs) > 0 {
			errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: fmt.Sprintf("%s.categories[%d]", path, i), Value: s, Detail: strings.Join(msgs, ",")})
		}
	}
	return errs
}

func validateConversion(c *crdConversion, path string) []FieldError {
	if c == nil {
		return nil
	}
	var errs []FieldError
	switch c.Strategy {
	case "":
		errs = append(errs, FieldError{Type: validation.TypeRequired, Field: path + ".strategy", Value: ""})
	case "None":
		if c.Webhook != nil && c.Webhook.ClientConfig != nil {
			errs = append(errs, FieldError{Type: validation.TypeForbidden, Field: path + ".webhookClientConfig", Detail: "should not be set when strategy is not set to Webhook"})
		}
	case "Webhook":
		if c.Webhook == nil || len(c.Webhook.ConversionReviewVersions) == 0 {
			errs = append(errs, FieldError{Type: validation.TypeRequired, Field: path + ".conversionReviewVersions", Value: ""})
		}
		if c.Webhook == nil || c.Webhook.ClientConfig == nil {
			errs = append(errs, FieldError{Type: validation.TypeRequired, Field: path + ".webhookClientConfig", Value: "", Detail: "required when strategy is set to Webhook"})
			break
		}
		cc := c.Webhook.ClientConfig
		switch {
		case (cc.URL == nil) == (cc.Service == nil):
			errs = append(errs, FieldError{Type: validation.TypeRequired, Field: path + ".webhookClientConfig", Value: "", Detail: "exactly one of url or service is required"})
		case cc.URL != nil:
			errs = append(errs, webhook.ValidateURL(path+".webhookClientConfig.url", *cc.URL)...)
		default:
			errs = append(errs, webhook.ValidateService(path+".webhookClientConfig.service", cc.Service)...)
		}
		vs := c.Webhook.ConversionReviewVersions
		switch {
		case len(vs) == 0:
			errs = append(errs, FieldError{Type: validation.TypeRequired, Field: path + ".conversionReviewVersions", Value: ""})
		case !contains(vs, "v1") && !contains(vs, "v1beta1"):
			errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: path + ".conversionReviewVersions", Value: vs, Detail: "must include at least one of v1, v1beta1"})
		}
	default:
		errs = append(errs, FieldError{Type: validation.TypeNotSupported, Field: path + ".strategy", Value: c.Strategy, Detail: `supported values: "None", "Webhook"`})
	}
	return errs
}

func validateStoredVersions(stored []string, versions []crdVersion) []FieldError {
	const p = "status.storedVersions"
	if len(stored) == 0 {
		return []FieldError{{Type: validation.TypeInvalid, Field: p, Value: nil, Detail: "must have at least one stored version"}}
	}
	var errs []FieldError
	names := map[string]bool{}
	for _, v := range versions {
		names[v.Name] = true
	}
	for _, v := range versions {
		if v.Storage && !contains(stored, v.Name) {
			errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: p, Value: stored, Detail: "must have the storage version " + v.Name})
		}
	}
	for i, v := range stored {
		if !names[v] {
			errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: p + "[" + strconv.Itoa(i) + "]", Value: v,
				Detail: fmt.Sprintf("missing from spec.versions; %[1]s was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in %[1]s and removes %[1]s from status.storedVersions", v)})
		}
	}
	return errs
}

// protectedGroup: kube's groups (k8s.io, kubernetes.io and their
// subdomains) need the api-approved annotation.
func protectedGroup(g string) bool {
	for _, d := range []string{"k8s.io", "kubernetes.io"} {
		if g == d || strings.HasSuffix(g, "."+d) {
			return true
		}
	}
	return false
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// versionsValue is spec.versions as kube's messages print it: its
// internal type's JSON, with the schemas, subresources and columns that
// every version shares moved to the top level (null here).
func versionsValue(vs []crdVersion, sameSchemas, sameSubresources, sameColumns bool) any {
	out := make([]any, len(vs))
	for i, v := range vs {
		m := map[string]any{"Name": v.Name, "Served": v.Served, "Storage": v.Storage, "Deprecated": v.Deprecated,
			"DeprecationWarning": v.DeprecationWarning, "Schema": nil, "Subresources": nil, "AdditionalPrinterColumns": nil, "SelectableFields": nil}
		if !sameSchemas && len(v.Schema) > 0 {
			m["Schema"] = json.RawMessage(v.Schema)
		}
		if !sameSubresources && len(v.Subresources) > 0 {
			m["Subresources"] = json.RawMessage(v.Subresources)
		}
		if !sameColumns && len(v.Columns) > 0 {
			m["AdditionalPrinterColumns"] = v.Columns
		}
		out[i] = orderedVersion(m)
	}
	return out
}

// orderedVersion marshals a version's fields in the internal type's
// order, as kube prints them.
type orderedVersion map[string]any

func (o orderedVersion) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range []string{"Name", "Served", "Storage", "Deprecated", "DeprecationWarning", "Schema", "Subresources", "AdditionalPrinterColumns", "SelectableFields"} {
		if i > 0 {
			b.WriteByte(',')
		}
		v, err := json.Marshal(o[k])
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "%q:%s", k, v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

var dns1035Re = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)

// dns1035 is apimachinery's IsDNS1035Label.
func dns1035(s string) []string {
	var msgs []string
	if len(s) > 63 {
		msgs = append(msgs, "must be no more than 63 characters")
	}
	if !dns1035Re.MatchString(s) {
		msgs = append(msgs, "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
	}
	return msgs
}

// maxSelectableFields is kube's bound on a version's selectable fields.
const maxSelectableFields = 8

// validateSelectableFields is kube's validation of the versions'
// selectableFields: each a JSON path (no array notation) to a string,
// boolean or integer field of the version's schema outside metadata, no
// two the same, at most eight. Selectable fields that are the same in
// every version are kube's internal top-level ones, reported under
// spec.selectableFields and checked against the top-level schema, which
// exists only when every version's schema is the same:
//
//	versions[0].selectableFields: [{jsonPath: .spec.replicas}]  (replicas: {type: array})
//	→ spec.selectableFields[0].jsonPath: Invalid value: ".spec.replicas": must point to a field of type string, boolean or integer. …
func validateSelectableFields(vs []crdVersion, sameSchemas bool) []FieldError {
	same := len(vs) > 0
	for _, v := range vs[min(1, len(vs)):] {
		same = same && reflect.DeepEqual(v.SelectableFields, vs[0].SelectableFields)
	}
	var errs []FieldError
	for i, v := range vs {
		if len(v.SelectableFields) == 0 || (same && i > 0) {
			continue
		}
		path, raw := fmt.Sprintf("spec.versions[%d].selectableFields", i), schemaOf(v.Schema)
		missing := "may only be set when `version.schema.openAPIV3Schema` is not included"
		if same {
			path, missing = "spec.selectableFields", "may only be set when validations.schema is included"
			if !sameSchemas {
				raw = nil
			}
		}
		if raw == nil {
			errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: path, Value: "", Detail: missing})
			continue
		}
		seen := map[string]bool{}
		for j, f := range v.SelectableFields {
			p := fmt.Sprintf("%s[%d].jsonPath", path, j)
			if f.JSONPath == "" {
				errs = append(errs, FieldError{Type: validation.TypeRequired, Field: p, Value: ""})
				continue
			}
			field, typ, err := selectablePath(f.JSONPath, raw)
			if err != nil {
				errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: p, Value: f.JSONPath, Detail: "is an invalid path: " + err.Error()})
				continue
			}
			if strings.HasPrefix(field, "metadata.") || field == "metadata" {
				errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: p, Value: f.JSONPath, Detail: "must not point to fields in metadata"})
			}
			if typ != "string" && typ != "boolean" && typ != "integer" {
				errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: p, Value: f.JSONPath, Detail: "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."})
			}
			if seen[field] {
				errs = append(errs, FieldError{Type: validation.TypeDuplicate, Field: p, Value: f.JSONPath})
			}
			seen[field] = true
		}
		if len(seen) > maxSelectableFields {
			errs = append(errs, FieldError{Type: validation.TypeTooMany, Field: path, Value: len(seen), Detail: fmt.Sprintf("must have at most %d items", maxSelectableFields)})
		}
	}
	return errs
}

// selectablePath follows a selectable field's JSON path (".spec.color")
// through a structural schema, as kube's cel.ValidFieldPath does without
// array notation, and returns the field's path ("spec.color", a map key
// as "spec.labels[k]") and type.
func selectablePath(jsonPath string, s map[string]any) (string, string, error) {
	if strings.ContainsAny(jsonPath, "[]") {
		return "", "", errors.New("array notation is not allowed")
	}
	if !strings.HasPrefix(jsonPath, ".") {
		first, _, _ := strings.Cut(jsonPath, ".")
		return "", "", fmt.Errorf("expected [ or . but got: %s", first)
	}
	var path string
	for _, name := range strings.Split(jsonPath[1:], ".") {
		if name == "" {
			return "", "", errors.New("unexpected end of JSON path")
		}
		props, _ := s["properties"].(map[string]any)
		add, _ := s["additionalProperties"].(map[string]any)
		switch {
		case props != nil:
			next, ok := props[name].(map[string]any)
			if !ok {
				return "", "", errors.New("does not refer to a valid field")
			}
			s = next
			if path != "" {
				path += "."
			}
			path += name
		case add != nil:
			s = add
			path += "[" + name + "]"
		default:
			return "", "", errors.New("does not refer to a valid field")
		}
	}
	typ, _ := s["type"].(string)
	return path, typ, nil
}

// validateDefaults is kube's check of a schema's defaults: each, with the
// defaults inside it applied, must have no field its node does not
// specify and must be valid against its node, errors reported under the
// default's path (its node's, then ".default"):
//
//	properties: {size: {type: integer, maximum: 5, default: 9}}
//	→ <path>.properties[size].default: Invalid value: 9:  in body should be less than or equal to 5
func validateDefaults(s *schema.Schema, path string) []FieldError {
	if s == nil {
		return nil
	}
	var errs []FieldError
	if s.Default != nil {
		at := path + ".default"
		def := deepCopy(s.Default)
		s.ApplyDefaults(def)
		if obj, ok := def.(map[string]any); ok {
			pruned := deepCopy(obj).(map[string]any)
			if len(s.Prune(pruned)) > 0 {
				errs = append(errs, FieldError{Type: validation.TypeInvalid, Field: at, Value: s.Default, Detail: "must not have unknown fields"})
			}
		}
		if len(errs) == 0 {
			for _, e := range s.Validate(def) {
				if e.Field != "" {
					e.Field = at + "." + e.Field
				} else {
					e.Field = at
				}
				errs = append(errs, e)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		errs = append(errs, validateDefaults(s.Properties[k], path+".properties["+k+"]")...)
	}
	errs = append(errs, validateDefaults(s.AdditionalProperties, path+".additionalProperties")...)
	return append(errs, validateDefaults(s.Items, path+".items")...)
}
