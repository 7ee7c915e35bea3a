package deleteopts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi/registry/internal/jsonobj"
)

// Options is meta/v1 DeleteOptions, as a body or a query gives it.
type Options struct {
	Kind               string   `json:"kind"`
	APIVersion         string   `json:"apiVersion"`
	GracePeriodSeconds *int64   `json:"gracePeriodSeconds"`
	PropagationPolicy  *string  `json:"propagationPolicy"`
	OrphanDependents   *bool    `json:"orphanDependents"`
	DryRun             []string `json:"dryRun"`
	Preconditions      *struct {
		UID             *string `json:"uid"`
		ResourceVersion *string `json:"resourceVersion"`
	} `json:"preconditions"`
	IgnoreStoreReadError *bool `json:"ignoreStoreReadErrorWithClusterBreakingPotential"`
}

// Parse reads a JSON DeleteOptions body (b not empty), refusing another
// kind or a mistyped field with kube's error texts (kube answers 400).
func Parse(b []byte) (Options, error) {
	var body Options
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] != '{' && !bytes.Equal(t, []byte("null")) {
		var v any
		if err := json.Unmarshal(t, &v); err != nil {
			return body, fmt.Errorf("couldn't get version/kind; json parse error: %v", err)
		}
		return body, fmt.Errorf("couldn't get version/kind; json parse error: json: cannot unmarshal %s into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }", jsonobj.Kind(v))
	}
	var tm struct {
		APIVersion any `json:"apiVersion"`
		Kind       any `json:"kind"`
	}
	if err := json.Unmarshal(b, &tm); err != nil {
		return body, fmt.Errorf("couldn't get version/kind; json parse error: %v", err)
	}
	av, _ := tm.APIVersion.(string)
	kind, _ := tm.Kind.(string)
	if err := checkKind(av, kind); err != nil {
		return body, err
	}
	if err := json.Unmarshal(b, &body); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return body, fmt.Errorf("json: cannot unmarshal %s into Go struct field DeleteOptions.%s of type %s", te.Value, te.Field, te.Type)
		}
		return body, fmt.Errorf("the DeleteOptions body is not valid JSON: %v", err)
	}
	return body, nil
}

// metaSchemeName is how kube's meta scheme names itself in decoding errors.
const metaSchemeName = "pkg/runtime/scheme.go:111"

// unversionedMetaKinds are the kinds kube's meta scheme knows in every
// group/version, by Go type: decoding one as DeleteOptions is a conversion
// error. metaKinds are those it knows in the meta.k8s.io versions only.
var (
	unversionedMetaKinds = map[string]string{
		"Status": "v1.Status", "APIVersions": "v1.APIVersions", "APIGroupList": "v1.APIGroupList",
		"APIGroup": "v1.APIGroup", "APIResourceList": "v1.APIResourceList",
		"CreateOptions": "v1.CreateOptions", "UpdateOptions": "v1.UpdateOptions",
	}
	metaKinds = map[string]map[string]string{
		"meta.k8s.io/v1": {"GetOptions": "v1.GetOptions", "ListOptions": "v1.ListOptions", "PatchOptions": "v1.PatchOptions",
			"WatchEvent": "v1.WatchEvent", "Table": "v1.Table", "TableOptions": "v1.TableOptions",
			"PartialObjectMetadata": "v1.PartialObjectMetadata", "PartialObjectMetadataList": "v1.PartialObjectMetadataList"},
		"meta.k8s.io/v1beta1": {"Table": "v1.Table", "TableOptions": "v1.TableOptions",
			"PartialObjectMetadata": "v1.PartialObjectMetadata", "PartialObjectMetadataList": "v1beta1.PartialObjectMetadataList"},
	}
)

// checkKind refuses a body that is not DeleteOptions with the error kube's
// meta codec gives. DeleteOptions is an unversioned kind there: any
// apiVersion is accepted with it, as kube does.
func checkKind(apiVersion, kind string) error {
	if strings.Count(apiVersion, "/") > 1 {
		return fmt.Errorf("unexpected GroupVersion string: %s", apiVersion)
	}
	if apiVersion == "" {
		apiVersion = "meta.k8s.io/v1"
	}
	if kind == "" || kind == "DeleteOptions" {
		return nil
	}
	typ, ok := unversionedMetaKinds[kind]
	if !ok {
		typ, ok = metaKinds[apiVersion][kind]
	}
	if ok {
		return fmt.Errorf("converting (%s) to (v1.DeleteOptions): unknown conversion", typ)
	}
	return fmt.Errorf("no kind %q is registered for version %q in scheme %q", kind, apiVersion, metaSchemeName)
}

// FromQuery reads the options of a DELETE without a body from its query
// (an error is a 400).
func FromQuery(q url.Values) (Options, error) {
	var body Options
	body.DryRun = q["dryRun"]
	if s := q.Get("gracePeriodSeconds"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil { // kube's words: the parser's error
			return body, err
		}
		body.GracePeriodSeconds = &n
	}
	if v, ok := q["propagationPolicy"]; ok {
		body.PropagationPolicy = &v[0]
	}
	for _, p := range []struct {
		name string
		dst  **bool
	}{{"orphanDependents", &body.OrphanDependents}, {"ignoreStoreReadErrorWithClusterBreakingPotential", &body.IgnoreStoreReadError}} {
		if v, ok := q[p.name]; ok {
			b, err := strconv.ParseBool(v[0])
			if err != nil {
				return body, fmt.Errorf("invalid %s %q: must be true or false", p.name, v[0])
			}
			*p.dst = &b
		}
	}
	return body, nil
}

// Cause is one reason Validate refuses the options.
type Cause struct {
	Type, Field, Message string
}

// Validate is apimachinery's ValidateDeleteOptions: the causes of kube's
// 422, none when b is valid.
func Validate(b Options) []Cause {
	var errs []Cause
	add := func(typ, field, msg string) { errs = append(errs, Cause{Type: typ, Field: field, Message: msg}) }
	if p := b.PropagationPolicy; p != nil {
		if b.OrphanDependents != nil {
			add("FieldValueInvalid", "propagationPolicy", "Invalid value: "+strconv.Quote(*p)+": orphanDependents and deletionPropagation cannot be both set")
		}
		if *p != "Foreground" && *p != "Background" && *p != "Orphan" {
			add("FieldValueNotSupported", "propagationPolicy", "Unsupported value: "+strconv.Quote(*p)+`: supported values: "Foreground", "Background", "Orphan", "nil"`)
		}
	}
	for _, v := range b.DryRun {
		if v != "All" {
			q := make([]string, len(b.DryRun))
			for i, s := range b.DryRun {
				q[i] = strconv.Quote(s)
			}
			add("FieldValueNotSupported", "dryRun", "Unsupported value: ["+strings.Join(q, ", ")+`]: supported values: "All"`)
			break
		}
	}
	if b.IgnoreStoreReadError != nil && *b.IgnoreStoreReadError {
		const f = "ignoreStoreReadErrorWithClusterBreakingPotential"
		for _, c := range []struct {
			set  bool
			name string
		}{{b.PropagationPolicy != nil, "propagationPolicy"}, {b.OrphanDependents != nil, "orphanDependents"},
			{b.GracePeriodSeconds != nil, "gracePeriodSeconds"}, {b.Preconditions != nil, "preconditions"}} {
			if c.set {
				add("FieldValueInvalid", f, "Invalid value: true: cannot be set together with ."+c.name)
			}
		}
	}
	// A negative gracePeriodSeconds is valid: kube reads it as 1s, and
	// kapi, which has no graceful deletion, deletes at once whatever it is.
	return errs
}
