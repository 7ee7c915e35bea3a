package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kapi-dev/kapi/patch"
	kschema "github.com/kapi-dev/kapi/schema"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
)

// benchApplyWidget is patch's benchmark widget: about size bytes of JSON,
// mostly spec.ports (a list map) and spec.settings (a granular map).
func benchApplyWidget(size int) map[string]any {
	var ports []any
	settings := map[string]any{}
	o := map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "default", "labels": map[string]any{"app": "w"}},
		"spec":     map[string]any{"color": "red", "replicas": json.Number("1")},
	}
	for i := 0; ; i++ {
		if i%16 == 0 {
			if b, _ := json.Marshal(o); len(b) >= size {
				return o
			}
		}
		if i%2 == 0 {
			ports = append(ports, map[string]any{"port": json.Number(fmt.Sprint(1000 + i)), "protocol": "TCP", "name": fmt.Sprintf("port-%d", i)})
			o["spec"].(map[string]any)["ports"] = ports
		} else {
			settings[fmt.Sprintf("setting-%d", i)] = fmt.Sprintf("value-%d", i)
			o["spec"].(map[string]any)["settings"] = settings
		}
	}
}

// BenchmarkApply compares server-side apply and managedFields tracking of
// one changed field in kapi's field manager and in kube's (k8s.io/
// apimachinery's managedfields, as kube-apiserver runs it for a CRD), on
// the same widgets with managedFields.
func BenchmarkApply(b *testing.B) {
	gvk := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	raw, err := os.ReadFile(filepath.Join(applyCorpus, "widget-schema.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	s, err := kschema.Parse(raw)
	if err != nil {
		b.Fatal(err)
	}
	kapiFM, err := patch.NewFieldManager(s, "example.com/v1", patch.FieldManagerOptions{Kind: "Widget"})
	if err != nil {
		b.Fatal(err)
	}
	kube := &kubeFieldManagers{gvk: gvk, tc: widgetTypeConverter(b, gvk), by: map[string]*managedfields.FieldManager{}}
	kubeFM := kube.get(b, "")
	for _, size := range []int{2 << 10, 100 << 10} {
		name := fmt.Sprintf("%dKiB", size>>10)
		live, err := kapiFM.Apply(nil, benchApplyWidget(size), patch.ApplyOptions{Manager: "a"})
		if err != nil {
			b.Fatal(err)
		}
		live = withUIDSet(live)
		var cfgs, objs [2]map[string]any
		for i := range cfgs {
			cfgs[i] = benchApplyWidget(size)
			cfgs[i]["spec"].(map[string]any)["replicas"] = json.Number(fmt.Sprint(i + 2))
			objs[i] = withUIDSet(benchApplyWidget(size))
			objs[i]["spec"].(map[string]any)["replicas"] = json.Number(fmt.Sprint(i + 2))
			objs[i]["metadata"].(map[string]any)["managedFields"] = live["metadata"].(map[string]any)["managedFields"]
		}
		kubeLive := &unstructured.Unstructured{Object: kubeForm(b, live)}
		kubeCfgs := [2]*unstructured.Unstructured{{Object: kubeForm(b, cfgs[0])}, {Object: kubeForm(b, cfgs[1])}}
		kubeObjs := [2]*unstructured.Unstructured{{Object: kubeForm(b, objs[0])}, {Object: kubeForm(b, objs[1])}}

		b.Run("Apply/kapi/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := kapiFM.Apply(live, cfgs[i%2], patch.ApplyOptions{Manager: "a"}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("Apply/kube/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				// kube's Apply does not modify live; the patch object is
				// its own.
				if _, err := kubeFM.Apply(kubeLive, kubeCfgs[i%2].DeepCopy(), "a", false); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("Update/kapi/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := kapiFM.Update(live, objs[i%2], patch.UpdateOptions{Manager: "editor"}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("Update/kube/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				// kube's Update replaces the new object's managedFields,
				// so each round gets a copy (as each request decodes one).
				if _, err := kubeFM.Update(kubeLive, kubeObjs[i%2].DeepCopy(), "editor"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
