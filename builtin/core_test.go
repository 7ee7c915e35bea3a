package builtin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// call is one request of a core-kind test and what its answer must hold.
type call struct {
	method, path, body string
	code               int
	want               []string // substrings of the answer's body
	absent             []string // substrings it must not have
}

// TestCoreKinds checks kube's answers the differential corpus found
// kapi giving otherwise (builtin-core.yaml), one sequence of requests each.
func TestCoreKinds(t *testing.T) {
	const pods = "/api/v1/namespaces/default/pods"
	const pvcs = "/api/v1/namespaces/default/persistentvolumeclaims"
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"app","image":"nginx"}]}}`
	bind := `{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p"},"target":{"kind":"Node","name":"node-1"}}`
	tests := []struct {
		name  string
		calls []call
	}{
		{"binding twice names the binding", []call{
			{"POST", pods, pod, 201, nil, nil},
			{"POST", pods + "/p/binding", bind, 201, nil, nil},
			{"POST", pods + "/p/binding", bind, 409, []string{`"details":{"name":"p","kind":"pods/binding"}`}, nil},
			{"GET", pods + "/p", "", 200, []string{`"generation":1,`, `"nodeName":"node-1"`, `"type":"PodScheduled"`}, []string{`"f:nodeName"`, `"subresource":"status"`}},
		}},
		{"a scheduled pod stays being deleted", []call{
			{"POST", pods, pod, 201, nil, nil},
			{"POST", pods + "/p/binding", bind, 201, nil, nil},
			{"DELETE", pods + "/p", "", 200, []string{`"deletionGracePeriodSeconds":30`}, nil},
			{"GET", pods + "/p", "", 200, []string{`"deletionGracePeriodSeconds":30`, `"generation":2`}, nil},
			{"DELETE", pods + "/p?gracePeriodSeconds=0", "", 200, []string{`"deletionGracePeriodSeconds":0`}, nil},
			{"GET", pods + "/p", "", 404, nil, nil},
		}},
		{"a gated pod starts unschedulable", []call{
			{"POST", pods, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"g"},"spec":{"schedulingGates":[{"name":"example.com/wait"}],"containers":[{"name":"app","image":"nginx"}]}}`, 201,
				[]string{`"message":"Scheduling is blocked due to non-empty scheduling gates","reason":"SchedulingGated","status":"False","type":"PodScheduled"`}, nil},
			{"POST", pods, pod, 201, nil, []string{`"conditions"`}},
		}},
		{"an update may not add a container", []call{
			{"POST", pods, pod, 201, nil, nil},
			{"PATCH", pods + "/p", `{"spec":{"containers":[{"name":"two","image":"busybox"}]}}`, 422,
				[]string{`"message":"Pod \"p\" is invalid: spec.containers: Forbidden: pod updates may not add or remove containers"`}, nil},
		}},
		{"an update may not change restartPolicy", []call{
			{"POST", pods, pod, 201, nil, nil},
			{"PATCH", pods + "/p", `{"spec":{"restartPolicy":"Never"}}`, 422, []string{`"field":"spec"`, `pod updates may not change fields other than`}, nil},
		}},
		{"endpoints with an address that is not an IP", []call{
			{"POST", "/api/v1/namespaces/default/endpoints", `{"metadata":{"name":"x"},"subsets":[{"addresses":[{"ip":"nope"}]}]}`, 422,
				[]string{`subsets[0].addresses[0].ip: Invalid value: \"nope\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`,
					`"message":"Invalid value: \"nope\": must be a valid IP address","field":"subsets[0].addresses[0].ip"`}, nil},
			{"POST", "/api/v1/namespaces/default/endpoints", `{"metadata":{"name":"y"},"subsets":[{"addresses":[{"ip":"127.0.0.1"}]}]}`, 422,
				[]string{`may not be in the loopback range (127.0.0.0/8, ::1/128)`}, nil},
			{"POST", "/api/v1/namespaces/default/endpoints", `{"metadata":{"name":"z"},"subsets":[{"ports":[{"port":80}]}]}`, 422,
				[]string{"subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`"}, nil},
			{"POST", "/api/v1/namespaces/default/endpoints", `{"metadata":{"name":"ok"},"subsets":[{"addresses":[{"ip":"10.1.2.3"}]}]}`, 201, nil, nil},
		}},
		{"limitrange default above max", []call{
			{"POST", "/api/v1/namespaces/default/limitranges", `{"metadata":{"name":"x"},"spec":{"limits":[{"type":"Container","max":{"cpu":"1"},"default":{"cpu":"2"}}]}}`, 422,
				[]string{`spec.limits[0].defaultRequest[cpu]: Invalid value: \"2\": default request value 2 is greater than max value 1`,
					`spec.limits[0].default[cpu]: Invalid value: \"1\": default value 2 is greater than max value 1`}, nil},
			{"POST", "/api/v1/namespaces/default/limitranges", `{"metadata":{"name":"y"},"spec":{"limits":[{"type":"Container","min":{"memory":"2Gi"},"max":{"memory":"1Gi"}}]}}`, 422,
				[]string{`spec.limits[0].min[memory]: Invalid value: \"2Gi\": min value 2Gi is greater than max value 1Gi`}, nil},
			{"POST", "/api/v1/namespaces/default/limitranges", `{"metadata":{"name":"ok"},"spec":{"limits":[{"type":"Container","max":{"cpu":"2"},"default":{"cpu":"500m"}}]}}`, 201, nil, nil},
		}},
		{"service to ExternalName drops what it no longer uses", []call{
			{"POST", "/api/v1/namespaces/default/services", `{"metadata":{"name":"s"},"spec":{"selector":{"app":"web"},"ports":[{"port":80}]}}`, 201, []string{`"clusterIP":"10.`}, nil},
			{"PATCH", "/api/v1/namespaces/default/services/s", `{"spec":{"type":"ExternalName","externalName":"example.com","clusterIP":"","clusterIPs":null}}`, 200,
				[]string{`"spec":{"externalName":"example.com","ports":[{"port":80,"protocol":"TCP","targetPort":80}],"selector":{"app":"web"},"sessionAffinity":"None","type":"ExternalName"}`}, nil},
		}},
		{"a claim's spec is immutable but a bound claim's size", []call{
			{"POST", pvcs, `{"metadata":{"name":"x"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`, 201, nil, nil},
			{"PATCH", pvcs + "/x", `{"spec":{"accessModes":["ReadWriteMany"]}}`, 422,
				[]string{`"message":"PersistentVolumeClaim \"x\" is invalid: spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n`}, nil},
			{"PATCH", pvcs + "/x", `{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`, 422, []string{`"field":"spec"`}, nil},
			{"PATCH", pvcs + "/x", `{"spec":{"volumeName":"pv-1","storageClassName":"fast"}}`, 200, []string{`"volumeName":"pv-1"`}, nil},
			{"PATCH", pvcs + "/x/status", `{"status":{"phase":"Bound"}}`, 200, nil, nil},
			{"PATCH", pvcs + "/x", `{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`, 200, []string{`"storage":"2Gi"`}, nil},
			{"PATCH", pvcs + "/x", `{"spec":{"volumeName":"pv-2"}}`, 422, []string{`"field":"spec"`}, nil},
		}},
		{"an unscheduled pod goes at once", []call{
			{"POST", pods, pod, 201, nil, nil},
			{"DELETE", pods + "/p", "", 200, []string{`"deletionGracePeriodSeconds":0`, `"generation":2`}, nil},
			{"GET", pods + "/p", "", 404, nil, nil},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRegistry(t)
			for i, c := range tt.calls {
				req := httptest.NewRequestWithContext(context.Background(), c.method, c.path, strings.NewReader(c.body))
				req.Header.Set("Content-Type", "application/json")
				if c.method == "PATCH" {
					req.Header.Set("Content-Type", "application/strategic-merge-patch+json")
				}
				w := httptest.NewRecorder()
				r.ServeHTTP(w, req)
				if w.Code != c.code {
					t.Fatalf("call %d, %s %s: code %d (%s); want %d", i, c.method, c.path, w.Code, w.Body, c.code)
				}
				if !json.Valid(w.Body.Bytes()) && w.Code != http.StatusNotFound {
					t.Fatalf("call %d: body is not JSON: %s", i, w.Body)
				}
				for _, s := range c.want {
					if !strings.Contains(w.Body.String(), s) {
						t.Fatalf("call %d, %s %s: answer %s; want it to contain %s", i, c.method, c.path, w.Body, s)
					}
				}
				for _, s := range c.absent {
					if strings.Contains(w.Body.String(), s) {
						t.Fatalf("call %d, %s %s: answer %s; want no %s in it", i, c.method, c.path, w.Body, s)
					}
				}
			}
		})
	}
}
