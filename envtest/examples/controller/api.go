package controller

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the Greeting's API group and version.
var GroupVersion = schema.GroupVersion{Group: "example.kapi.dev", Version: "v1"}

// AddToScheme adds Greeting and GreetingList to a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Greeting{}, &GreetingList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// Greeting asks for a ConfigMap holding its message.
type Greeting struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              GreetingSpec   `json:"spec"`
	Status            GreetingStatus `json:"status,omitempty"`
}

// GreetingSpec is what the user wants.
type GreetingSpec struct {
	Message string `json:"message"`
}

// GreetingStatus is what the controller did.
type GreetingStatus struct {
	ConfigMap          string `json:"configMap,omitempty"`
	ObservedGeneration int64  `json:"observedGeneration,omitempty"`
}

// GreetingList is a list of Greetings.
type GreetingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Greeting `json:"items"`
}

// DeepCopyObject copies g.
func (g *Greeting) DeepCopyObject() runtime.Object {
	c := *g
	g.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

// DeepCopyObject copies l.
func (l *GreetingList) DeepCopyObject() runtime.Object {
	c := *l
	l.ListMeta.DeepCopyInto(&c.ListMeta)
	c.Items = make([]Greeting, len(l.Items))
	for i := range l.Items {
		c.Items[i] = *l.Items[i].DeepCopyObject().(*Greeting)
	}
	return &c
}
