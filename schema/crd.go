package schema

// CRD is what kapi reads from an apiextensions.k8s.io/v1
// CustomResourceDefinition: enough to serve its kinds.
type CRD struct {
	Name       string // metadata.name, "<plural>.<group>"
	Group      string
	Names      Names
	Namespaced bool // spec.scope == "Namespaced"
	Versions   []Version
}

// Names are a CRD's spec.names.
type Names struct {
	Plural, Singular, Kind, ListKind string
	ShortNames, Categories           []string
}

// Version is one entry of a CRD's spec.versions.
type Version struct {
	Name    string
	Served  bool
	Storage bool
	// Schema is the version's openAPIV3Schema (the whole object: apiVersion,
	// kind, metadata, spec, status).
	Schema *Schema
	// Status and Scale are the subresources the version enables.
	Status bool
	Scale  *Scale
	// Columns are the additionalPrinterColumns.
	Columns []Column
	// SelectableFields are the selectableFields' JSON paths without the
	// leading dot, e.g. "spec.color".
	SelectableFields []string
	Deprecated       bool
}

// Scale is a CRD version's scale subresource.
type Scale struct {
	SpecReplicasPath   string // e.g. ".spec.replicas"
	StatusReplicasPath string
	LabelSelectorPath  string // optional
}

// Column is one additionalPrinterColumns entry.
type Column struct {
	Name        string
	Type        string
	Format      string
	Description string
	Priority    int32
	JSONPath    string
}
