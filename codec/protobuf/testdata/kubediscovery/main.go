// Command kubediscovery writes codec/protobuf's discovery golden files with
// Kubernetes' own code: for each document, the JSON and the protobuf bytes
// k8s.io/apimachinery's and k8s.io/api's generated code make of it
// (../discovery/NAME.json, NAME.pb). The documents are kube-apiserver's
// committed discovery documents (k8s.io/kubernetes api/discovery) and a few
// written here for what those lack (acceptedTypes, Stale, verbs null).
//
// Before writing, it checks kapi's codec against kube's code both ways and
// fails if they differ: kube decodes kapi's Marshal of the JSON to the same
// Go value, and kapi's Unmarshal of kube's bytes is JSON of that Go value.
//
// Run from this directory (a module of its own, outside kapi's build):
//
//	go run .
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/kapi-dev/kapi/codec/protobuf"
)

// kubeVersion is the k8s.io/kubernetes release whose documents are read.
const kubeVersion = "v1.37.2"

// message is what kube's generated types offer.
type message interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
	GetObjectKind() schema.ObjectKind
}

type doc struct {
	name   string // output file name, without extension
	source string // a file in k8s.io/kubernetes/api/discovery, or "" for json
	json   string
	new    func() message
	md     protoreflect.MessageDescriptor
}

var (
	apiVersions     = func() message { return &metav1.APIVersions{} }
	apiGroupList    = func() message { return &metav1.APIGroupList{} }
	apiGroup        = func() message { return &metav1.APIGroup{} }
	apiResourceList = func() message { return &metav1.APIResourceList{} }
	aggregated      = func() message { return &apidiscoveryv2.APIGroupDiscoveryList{} }
)

var docs = []doc{
	{name: "api", source: "api.json", new: apiVersions, md: protobuf.APIVersions},
	{name: "apis", source: "apis.json", new: apiGroupList, md: protobuf.APIGroupList},
	{name: "apis_apps", source: "apis__apps.json", new: apiGroup, md: protobuf.APIGroup},
	{name: "apis_autoscaling", source: "apis__autoscaling.json", new: apiGroup, md: protobuf.APIGroup},
	{name: "api_v1", source: "api__v1.json", new: apiResourceList, md: protobuf.APIResourceList},
	{name: "apis_apps_v1", source: "apis__apps__v1.json", new: apiResourceList, md: protobuf.APIResourceList},
	{name: "aggregated_v2", source: "aggregated_v2.json", new: aggregated, md: protobuf.APIGroupDiscoveryList},
	{name: "apis_group_cidrs", new: apiGroup, md: protobuf.APIGroup, json: `{"kind":"APIGroup","apiVersion":"v1","name":"autoscaling",
		"versions":[{"groupVersion":"autoscaling/v2","version":"v2"},{"groupVersion":"autoscaling/v1","version":"v1"}],
		"preferredVersion":{"groupVersion":"autoscaling/v2","version":"v2"},
		"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"10.0.0.1:6443"},{"clientCIDR":"","serverAddress":""}]}`},
	{name: "api_resources_edge", new: apiResourceList, md: protobuf.APIResourceList, json: `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"example.com/v1","resources":[
		{"name":"widgets","singularName":"widget","namespaced":false,"kind":"Widget","verbs":null},
		{"name":"widgets/scale","singularName":"","namespaced":true,"group":"autoscaling","version":"v1","kind":"Scale","verbs":[""]},
		{"name":"gadgets","singularName":"","namespaced":false,"kind":"","verbs":["get","list"],"shortNames":["g","gd"],"categories":["all","example"],"storageVersionHash":"+/8="}]}`},
	{name: "aggregated_accepted_types", new: aggregated, md: protobuf.APIGroupDiscoveryList, json: `{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","metadata":{"resourceVersion":"7"},"items":[
		{"metadata":{"name":"apps","creationTimestamp":null},"versions":[
			{"version":"v1","resources":[
				{"resource":"deployments","responseKind":{"group":"apps","version":"v1","kind":"Deployment"},"scope":"Namespaced","singularResource":"deployment",
				 "verbs":["create","delete","deletecollection","get","list","patch","update","watch"],"shortNames":["deploy"],"categories":["all"],
				 "subresources":[
					{"subresource":"scale","responseKind":{"group":"autoscaling","version":"v1","kind":"Scale"},
					 "acceptedTypes":[{"group":"autoscaling","version":"v1","kind":"Scale"},{"group":"","version":"","kind":""}],"verbs":["get","patch","update"]},
					{"subresource":"status","verbs":["get"]}]},
				{"resource":"widgets","scope":"Cluster","singularResource":"","verbs":["get"]}],
			 "freshness":"Current"},
			{"version":"v1beta2","resources":[{"resource":"deployments","responseKind":{"group":"","version":"","kind":"Deployment"},"scope":"Namespaced","singularResource":"deployment","verbs":["get","list"]}],"freshness":"Stale"},
			{"version":"v1alpha1"}]},
		{"metadata":{"name":"example.com","creationTimestamp":null,"labels":{"a":"b"}}}]}`},
}

func main() {
	out := flag.String("out", "../discovery", "directory to write NAME.json and NAME.pb into")
	kube := flag.String("kube", "", "k8s.io/kubernetes module directory (default: the module cache's "+kubeVersion+")")
	flag.Parse()
	if err := run(*out, *kube); err != nil {
		fmt.Fprintln(os.Stderr, "kubediscovery:", err)
		os.Exit(1)
	}
}

func run(out, kube string) error {
	if kube == "" {
		cache, err := exec.Command("go", "env", "GOMODCACHE").Output()
		if err != nil {
			return fmt.Errorf("go env GOMODCACHE: %w", err)
		}
		kube = filepath.Join(strings.TrimSpace(string(cache)), "k8s.io", "kubernetes@"+kubeVersion)
	}
	for _, d := range docs {
		src := []byte(d.json)
		if d.source != "" {
			var err error
			if src, err = os.ReadFile(filepath.Join(kube, "api", "discovery", d.source)); err != nil {
				return err
			}
		}
		js, pb, err := golden(d, src)
		if err != nil {
			return fmt.Errorf("%s: %w", d.name, err)
		}
		if err := os.WriteFile(filepath.Join(out, d.name+".json"), js, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, d.name+".pb"), pb, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// golden returns kube's JSON and protobuf bytes of the document src, after
// checking kapi's codec against them.
func golden(d doc, src []byte) (js, pb []byte, err error) {
	v := d.new()
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return nil, nil, err
	}
	if js, err = json.Marshal(v); err != nil {
		return nil, nil, err
	}
	if pb, err = v.Marshal(); err != nil {
		return nil, nil, err
	}
	obj, err := decodeJSON(js)
	if err != nil {
		return nil, nil, err
	}
	mine, err := protobuf.Marshal(d.md, obj)
	if err != nil {
		return nil, nil, fmt.Errorf("kapi Marshal: %w", err)
	}
	back := d.new()
	if err := back.Unmarshal(mine); err != nil {
		return nil, nil, fmt.Errorf("kube Unmarshal of kapi's bytes: %w", err)
	}
	// TypeMeta travels in the envelope, not in the message.
	back.GetObjectKind().SetGroupVersionKind(v.GetObjectKind().GroupVersionKind())
	if !equality.Semantic.DeepEqual(back, v) {
		b, _ := json.Marshal(back)
		return nil, nil, fmt.Errorf("kube decodes kapi's bytes differently: %s", diff(b, js))
	}
	got, err := protobuf.Unmarshal(d.md, pb)
	if err != nil {
		return nil, nil, fmt.Errorf("kapi Unmarshal of kube's bytes: %w", err)
	}
	// The same Go value: kapi reads kube's empty creationTimestamp as null,
	// where kube v1.37's JSON leaves it out (omitzero); both are the zero
	// time.
	g, _ := json.Marshal(got)
	read := d.new()
	if err := json.Unmarshal(g, read); err != nil {
		return nil, nil, err
	}
	read.GetObjectKind().SetGroupVersionKind(v.GetObjectKind().GroupVersionKind())
	if !equality.Semantic.DeepEqual(read, v) {
		return nil, nil, fmt.Errorf("kapi decodes kube's bytes differently: %s", diff(g, js))
	}
	return append(js, '\n'), pb, nil
}

func decodeJSON(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	return m, dec.Decode(&m)
}

// diff shows where JSON texts got and want first differ.
func diff(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-80)
	return fmt.Sprintf("at byte %d:\ngot  …%s\nwant …%s", i, got[from:min(len(got), i+80)], want[from:min(len(want), i+80)])
}
