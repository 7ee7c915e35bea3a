package inprocess_test

import (
	"context"
	"fmt"
	"time"

	"github.com/kapi-dev/kapi/reference/inprocess"
)

const widgets = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// Start etcd and apiextensions-apiserver on it, and install a CRD.
func Example() {
	e, err := inprocess.StartEtcd(inprocess.EtcdOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()
	s, err := inprocess.StartAPIExtensions(inprocess.APIExtensionsOptions{EtcdServers: []string{e.Endpoint}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	crd, err := inprocess.InstallCRD(ctx, s.Config, widgets)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(crd.Status.AcceptedNames.Kind)
	// Output: Widget
}
