package schema

// Schema is one node of a structural schema: the OpenAPI v3 subset that
// CustomResourceDefinitions use, with Kubernetes' x-kubernetes extensions
// and the strategic-merge-patch hints of k8s.io/api's Go tags. The zero
// value is "any value"; a nil *Schema is too.
//
// Worked example: the widgets' spec.ports
//
//	type: array
//	x-kubernetes-list-type: map
//	x-kubernetes-list-map-keys: [port, protocol]
//	items: {type: object, properties: {port: {type: integer}, protocol: {type: string}}}
//
// is Schema{Type: "array", ListType: "map", ListMapKeys: []string{"port",
// "protocol"}, Items: &Schema{Type: "object", Properties: ...}}: server-side
// apply merges its entries by (port, protocol), and so does strategic merge
// patch, which for schemas without patch tags takes list-map keys as merge
// keys.
type Schema struct {
	Type        string // object, array, string, integer, number, boolean; "" for any
	Format      string // int32, int64, date-time, byte, ...
	Title       string
	Description string
	Example     any // JSON form, published only
	Nullable    bool
	Default     any // JSON form, as in the manifest

	Properties map[string]*Schema
	// AdditionalProperties is the schema of every value of a map
	// (type object without properties).
	AdditionalProperties *Schema
	Required             []string
	Items                *Schema // arrays

	// Value constraints (validated by a later issue; kept and published).
	Enum             []any
	Pattern          string
	MinLength        *int64
	MaxLength        *int64
	MinItems         *int64
	MaxItems         *int64
	MinProperties    *int64
	MaxProperties    *int64
	Minimum          *float64
	Maximum          *float64
	ExclusiveMinimum bool
	ExclusiveMaximum bool
	MultipleOf       *float64
	UniqueItems      bool

	// AllOf, AnyOf, OneOf and Not are value validations (kubebuilder
	// writes anyOf [{type: integer}, {type: string}] beside
	// x-kubernetes-int-or-string); structural schemas allow no types or
	// properties in them that the node itself does not have.
	AllOf, AnyOf, OneOf []*Schema
	Not                 *Schema

	Ext
}

// Ext holds the x-kubernetes extensions of a node and the strategic merge
// hints Go tags give.
type Ext struct {
	PreserveUnknownFields bool     // x-kubernetes-preserve-unknown-fields
	EmbeddedResource      bool     // x-kubernetes-embedded-resource
	IntOrString           bool     // x-kubernetes-int-or-string
	ListType              string   // x-kubernetes-list-type: atomic, set, map ("" is atomic)
	ListMapKeys           []string // x-kubernetes-list-map-keys
	MapType               string   // x-kubernetes-map-type: atomic, granular ("" is granular)
	Validations           []Rule   // x-kubernetes-validations

	// PatchStrategy and PatchMergeKey are k8s.io/api's patchStrategy and
	// patchMergeKey tags (x-kubernetes-patch-strategy and
	// x-kubernetes-patch-merge-key in OpenAPI): "merge", "replace",
	// "retainKeys" or "merge,retainKeys".
	PatchStrategy string
	PatchMergeKey string

	// GoType is the Go struct type a decoder reads an object node into,
	// as reflect prints it ("v1.ObjectMeta"), where the schema comes from
	// Go types: what encoding/json's decode errors name (package gojson
	// in the registry). "" when unknown. Not published.
	GoType string
}

// Rule is one x-kubernetes-validations CEL rule, kept for the validation
// issue.
type Rule struct {
	Rule              string `json:"rule"`
	Message           string `json:"message,omitempty"`
	MessageExpression string `json:"messageExpression,omitempty"`
	FieldPath         string `json:"fieldPath,omitempty"`
	Reason            string `json:"reason,omitempty"`
	OptionalOldSelf   *bool  `json:"optionalOldSelf,omitempty"`
}
