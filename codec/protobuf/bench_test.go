package protobuf

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// benchConfigMap is a ConfigMap in JSON form of about size bytes: typical
// metadata and data entries of 100 bytes.
func benchConfigMap(size int) map[string]any {
	data := map[string]any{}
	for i := 0; len(data)*128 < size-500; i++ {
		data[fmt.Sprintf("key-%05d.properties", i)] = strings.Repeat("v", 100)
	}
	return map[string]any{
		"metadata": map[string]any{
			"name": "settings", "namespace": "default", "uid": "6b1f6c4e-3c57-4f4e-9f0b-0d1d5c2f7a10",
			"resourceVersion": "12345", "creationTimestamp": "2026-11-23T07:38:04Z",
			"labels":      map[string]any{"app": "web", "tier": "frontend"},
			"annotations": map[string]any{"example.com/owner": "team-a"},
			"managedFields": []any{map[string]any{"manager": "kubectl", "operation": "Apply", "apiVersion": "v1",
				"time": "2026-11-23T07:38:04Z", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:data": map[string]any{}}}},
			"generation": json.Number("1"),
		},
		"data": data,
	}
}

func BenchmarkMarshal(b *testing.B) {
	for _, size := range []int{2 << 10, 100 << 10} {
		cm := benchConfigMap(size)
		raw, _ := Marshal(ConfigMap, cm)
		b.Run(fmt.Sprintf("ConfigMap-%dKiB", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if _, err := Marshal(ConfigMap, cm); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchDeployment is a Deployment as kapi stores and serves one created
// by client-go with one container: sparse messages (a PodSpec has 40
// fields, this one 8 keys), defaults and managedFields.
const benchDeployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d-1","namespace":"bench","uid":"6b1f6c4e-3c57-4f4e-9f0b-0d1d5c2f7a10","resourceVersion":"12","generation":1,"creationTimestamp":"2026-11-26T12:00:00Z",
"managedFields":[{"manager":"bench","operation":"Update","apiVersion":"apps/v1","time":"2026-11-26T12:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:progressDeadlineSeconds":{},"f:replicas":{},"f:revisionHistoryLimit":{},"f:selector":{},"f:strategy":{"f:rollingUpdate":{".":{},"f:maxSurge":{},"f:maxUnavailable":{}},"f:type":{}},"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}}}}]},
"spec":{"replicas":1,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"nginx:1.27","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","securityContext":{},"schedulerName":"default-scheduler"}},
"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":"25%"}},"revisionHistoryLimit":10,"progressDeadlineSeconds":600},"status":{}}`

func BenchmarkMarshalDeployment(b *testing.B) {
	d, err := Files.FindDescriptorByName("k8s.io.api.apps.v1.Deployment")
	if err != nil {
		b.Fatal(err)
	}
	md := d.(protoreflect.MessageDescriptor)
	var obj map[string]any
	dec := json.NewDecoder(strings.NewReader(benchDeployment))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		b.Fatal(err)
	}
	raw, err := Marshal(md, obj)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := Marshal(md, obj); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshal(b *testing.B) {
	for _, size := range []int{2 << 10, 100 << 10} {
		raw, _ := Marshal(ConfigMap, benchConfigMap(size))
		b.Run(fmt.Sprintf("ConfigMap-%dKiB", size>>10), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if _, err := Unmarshal(ConfigMap, raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAppendWatchFrame(b *testing.B) {
	raw, _ := Marshal(ConfigMap, benchConfigMap(2<<10))
	tm := TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}
	buf := make([]byte, 0, 4<<10)
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		buf = AppendWatchFrame(buf[:0], "MODIFIED", tm, raw)
	}
}
