package schema

import (
	"reflect"
	"time"
)

// The built-in schemas are derived with For from these mirrors of
// k8s.io/apimachinery's and k8s.io/api's types: the same JSON names,
// omitempty and patch tags, with their +listType, +listMapKey and
// +structType markers written as For's tags.

type typeMeta struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
}

type objectMeta struct {
	Name                       string              `json:"name,omitempty"`
	GenerateName               string              `json:"generateName,omitempty"`
	Namespace                  string              `json:"namespace,omitempty"`
	SelfLink                   string              `json:"selfLink,omitempty"`
	UID                        string              `json:"uid,omitempty"`
	ResourceVersion            string              `json:"resourceVersion,omitempty"`
	Generation                 int64               `json:"generation,omitempty"`
	CreationTimestamp          time.Time           `json:"creationTimestamp,omitempty,omitzero"`
	DeletionTimestamp          *time.Time          `json:"deletionTimestamp,omitempty"`
	DeletionGracePeriodSeconds *int64              `json:"deletionGracePeriodSeconds,omitempty"`
	Labels                     map[string]string   `json:"labels,omitempty"`
	Annotations                map[string]string   `json:"annotations,omitempty"`
	OwnerReferences            []ownerReference    `json:"ownerReferences,omitempty" patchStrategy:"merge" patchMergeKey:"uid" listType:"map" listMapKeys:"uid" mapType:"atomic"`
	Finalizers                 []string            `json:"finalizers,omitempty" patchStrategy:"merge" listType:"set"`
	ManagedFields              []managedFieldEntry `json:"managedFields,omitempty" listType:"atomic"`
}

type ownerReference struct {
	APIVersion         string `json:"apiVersion"`
	Kind               string `json:"kind"`
	Name               string `json:"name"`
	UID                string `json:"uid"`
	Controller         *bool  `json:"controller,omitempty"`
	BlockOwnerDeletion *bool  `json:"blockOwnerDeletion,omitempty"`
}

type managedFieldEntry struct {
	Manager     string     `json:"manager,omitempty"`
	Operation   string     `json:"operation,omitempty"`
	APIVersion  string     `json:"apiVersion,omitempty"`
	Time        *time.Time `json:"time,omitempty"`
	FieldsType  string     `json:"fieldsType,omitempty"`
	FieldsV1    *fieldsV1  `json:"fieldsV1,omitempty"`
	Subresource string     `json:"subresource,omitempty"`
}

// fieldsV1 is opaque JSON, as metav1.FieldsV1 declares itself.
type fieldsV1 struct{}

func (fieldsV1) OpenAPISchemaType() []string { return []string{"object"} }

type namespace struct {
	typeMeta `json:",inline"`
	Metadata objectMeta `json:"metadata,omitempty"`
	Spec     struct {
		Finalizers []string `json:"finalizers,omitempty" listType:"atomic"`
	} `json:"spec,omitempty" goType:"v1.NamespaceSpec"`
	Status struct {
		Phase      string               `json:"phase,omitempty"`
		Conditions []namespaceCondition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type" listType:"map" listMapKeys:"type"`
	} `json:"status,omitempty" goType:"v1.NamespaceStatus"`
}

type namespaceCondition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	LastTransitionTime time.Time `json:"lastTransitionTime,omitempty"`
	Reason             string    `json:"reason,omitempty"`
	Message            string    `json:"message,omitempty"`
}

type configMap struct {
	typeMeta   `json:",inline"`
	Metadata   objectMeta        `json:"metadata,omitempty"`
	Immutable  *bool             `json:"immutable,omitempty"`
	Data       map[string]string `json:"data,omitempty"`
	BinaryData map[string][]byte `json:"binaryData,omitempty"`
}

func mustFor(v any) *Schema {
	s, err := For(reflect.TypeOf(v))
	if err != nil {
		panic(err) // the types above are fixed; the tests derive them
	}
	return s
}

// ObjectMeta is the schema of metadata as k8s.io/apimachinery's ObjectMeta
// publishes it: strings for the names, uid and resourceVersion; generation
// and deletionGracePeriodSeconds integer int64; creationTimestamp and
// deletionTimestamp string date-time; labels and annotations maps of
// strings; ownerReferences list-type map keyed by uid with atomic entries
// (patch strategy merge, merge key uid); finalizers list-type set (patch
// strategy merge); managedFields atomic, each fieldsV1 opaque. Every call
// returns a new Schema the caller may change.
func ObjectMeta() *Schema { return mustFor(objectMeta{}) }

// Namespace is the schema of a core/v1 Namespace: apiVersion, kind,
// metadata (ObjectMeta), spec.finalizers (atomic list of strings),
// status.phase and status.conditions (list-type map keyed by type, patch
// strategy merge with merge key type).
func Namespace() *Schema { return mustFor(namespace{}) }

// ConfigMap is the schema of a core/v1 ConfigMap: apiVersion, kind,
// metadata (ObjectMeta), data (map of strings), binaryData (map of string
// format byte) and immutable (boolean).
func ConfigMap() *Schema { return mustFor(configMap{}) }
