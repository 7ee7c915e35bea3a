package builtin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/registry"
)

// do sends one request to r and decodes the answer's JSON.
func do(t *testing.T, r *registry.Registry, method, path, ct, body string) (int, http.Header, map[string]any) {
	t.Helper()
	req := httptest.NewRequestWithContext(context.Background(), method, path, strings.NewReader(body))
	if ct == "" {
		ct = "application/json"
	}
	req.Header.Set("Content-Type", ct)
	w := httptest.NewRecorder()
	r.ServeHTTP(w, req)
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatalf("%s %s: %d %s: %v", method, path, w.Code, w.Body, err)
	}
	return w.Code, w.Header(), m
}

// at is the value at a dotted path of m.
func at(m map[string]any, path string) any {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		o, _ := v.(map[string]any)
		v = o[k]
	}
	return v
}

// A batch/v1 Job deleted without a propagation policy orphans its pods,
// as kube's does, and says so in a Warning; a policy given silences it.
func TestJobDeleteOrphansByDefault(t *testing.T) {
	const job = `{"metadata":{"name":"j"},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}`
	for _, tt := range []struct {
		name, query string
		warn        bool
		finalizers  any
	}{
		{"default", "", true, []any{"orphan"}},
		{"background", "?propagationPolicy=Background", false, nil},
		{"orphan", "?propagationPolicy=Orphan", false, []any{"orphan"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRegistry(t)
			if code, _, body := do(t, r, "POST", "/apis/batch/v1/namespaces/default/jobs", "", job); code != 201 {
				t.Fatalf("create: %d %v", code, body)
			}
			code, h, body := do(t, r, "DELETE", "/apis/batch/v1/namespaces/default/jobs/j"+tt.query, "", "")
			if code != 200 {
				t.Fatalf("delete: %d %v", code, body)
			}
			warned := strings.Contains(strings.Join(h.Values("Warning"), "\n"), "child pods are preserved by default when jobs are deleted")
			if warned != tt.warn {
				t.Errorf("warnings %q; want the orphan warning: %v", h.Values("Warning"), tt.warn)
			}
			if tt.finalizers == nil {
				if body["kind"] != "Status" {
					t.Errorf("answer %v; want a Success Status (the job is gone)", body)
				}
				return
			}
			if got := at(body, "metadata.finalizers"); !equalJSON(got, tt.finalizers) {
				t.Errorf("finalizers %v; want %v", got, tt.finalizers)
			}
		})
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// events.k8s.io Events and core Events are one stored object: each group
// reads, lists and selects what the other wrote, under its own names.
func TestEventsShareStorage(t *testing.T) {
	r := newRegistry(t)
	code, _, body := do(t, r, "POST", "/apis/events.k8s.io/v1/namespaces/default/events", "",
		`{"metadata":{"name":"a"},"eventTime":"2026-11-26T06:00:00.000000Z","reportingController":"example.com/c","reportingInstance":"c-1","action":"Scale","reason":"Scaled","type":"Normal","note":"scaled up","regarding":{"kind":"Deployment","name":"web","namespace":"default"}}`)
	if code != 201 {
		t.Fatalf("create events.k8s.io: %d %v", code, body)
	}
	code, _, body = do(t, r, "POST", "/api/v1/namespaces/default/events", "",
		`{"metadata":{"name":"b"},"involvedObject":{"kind":"Pod","name":"p","namespace":"default"},"reason":"Pulled","message":"pulled","type":"Normal","source":{"component":"kubelet"},"count":2}`)
	if code != 201 {
		t.Fatalf("create core: %d %v", code, body)
	}
	for _, tt := range []struct {
		path  string
		want  map[string]any // path: value
		items int            // for lists: how many
	}{
		{path: "/api/v1/namespaces/default/events/a", want: map[string]any{"apiVersion": "v1", "message": "scaled up", "involvedObject.kind": "Deployment",
			"reportingComponent": "example.com/c", "reportingInstance": "c-1", "source": map[string]any{}, "note": nil, "regarding": nil}},
		{path: "/apis/events.k8s.io/v1/namespaces/default/events/b", want: map[string]any{"apiVersion": "events.k8s.io/v1", "note": "pulled", "regarding.kind": "Pod",
			"deprecatedSource.component": "kubelet", "deprecatedCount": float64(2), "message": nil}},
		{path: "/api/v1/namespaces/default/events", items: 2},
		{path: "/apis/events.k8s.io/v1/namespaces/default/events", items: 2},
		{path: "/api/v1/namespaces/default/events?fieldSelector=involvedObject.kind%3DDeployment", items: 1},
		{path: "/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector=regarding.kind%3DPod", items: 1},
		{path: "/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector=reportingController%3Dexample.com%2Fc", items: 1},
	} {
		t.Run(tt.path, func(t *testing.T) {
			code, _, body := do(t, r, "GET", tt.path, "", "")
			if code != 200 {
				t.Fatalf("%d %v", code, body)
			}
			for p, want := range tt.want {
				if got := at(body, p); !equalJSON(got, want) {
					t.Errorf("%s: got %v; want %v", p, got, want)
				}
			}
			if tt.want == nil {
				if items, _ := body["items"].([]any); len(items) != tt.items {
					t.Errorf("%d items; want %d: %v", len(items), tt.items, items)
				}
			}
		})
	}
}

// A write through one group drops the other group's managers, as kube's
// field manager does (it cannot convert the object for them).
func TestEventsUpdateDropsOtherGroupsManagers(t *testing.T) {
	r := newRegistry(t)
	code, _, body := do(t, r, "POST", "/apis/events.k8s.io/v1/namespaces/default/events?fieldManager=recorder", "",
		`{"metadata":{"name":"a"},"eventTime":"2026-11-26T06:00:00.000000Z","reportingController":"example.com/c","reportingInstance":"c-1","action":"Scale","reason":"Scaled","type":"Normal","note":"scaled up","regarding":{"kind":"Deployment","name":"web","namespace":"default"}}`)
	if code != 201 {
		t.Fatalf("create: %d %v", code, body)
	}
	code, _, body = do(t, r, "PATCH", "/api/v1/namespaces/default/events/a?fieldManager=editor", "application/merge-patch+json", `{"message":"rescaled"}`)
	if code != 200 {
		t.Fatalf("patch: %d %v", code, body)
	}
	want := []any{map[string]any{"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:message": map[string]any{}}, "manager": "editor", "operation": "Update"}}
	mfs, _ := at(body, "metadata.managedFields").([]any)
	for _, e := range mfs {
		delete(e.(map[string]any), "time")
	}
	if !equalJSON(mfs, want) {
		t.Errorf("managedFields %v; want %v", mfs, want)
	}
}

// An autoscaling/v2 HPA reads at v1 as kube converts it.
func TestHPAReadAcrossVersions(t *testing.T) {
	r := newRegistry(t)
	code, _, body := do(t, r, "POST", "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers", "",
		`{"metadata":{"name":"h"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":5,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":60}}},{"type":"Pods","pods":{"metric":{"name":"qps"},"target":{"type":"AverageValue","averageValue":"10"}}}]}}`)
	if code != 201 {
		t.Fatalf("create: %d %v", code, body)
	}
	_, _, v1 := do(t, r, "GET", "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/h", "", "")
	for p, want := range map[string]any{"apiVersion": "autoscaling/v1", "spec.targetCPUUtilizationPercentage": float64(60), "spec.metrics": nil,
		"status.currentReplicas": float64(0)} {
		if got := at(v1, p); !equalJSON(got, want) {
			t.Errorf("%s: got %v; want %v", p, got, want)
		}
	}
	ann, _ := at(v1, "metadata.annotations").(map[string]any)
	if got := ann["autoscaling.alpha.kubernetes.io/metrics"]; got != `[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"10"}}]` {
		t.Errorf("metrics annotation %v", got)
	}
	// A v1 update keeps what only v2 says.
	v1spec, _ := json.Marshal(v1)
	put := strings.Replace(string(v1spec), `"targetCPUUtilizationPercentage":60`, `"targetCPUUtilizationPercentage":70`, 1)
	if code, _, body := do(t, r, "PUT", "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/h", "", put); code != 200 {
		t.Fatalf("update at v1: %d %v", code, body)
	}
	_, _, v2 := do(t, r, "GET", "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/h", "", "")
	want := []any{map[string]any{"type": "Pods", "pods": map[string]any{"metric": map[string]any{"name": "qps"}, "target": map[string]any{"type": "AverageValue", "averageValue": "10"}}},
		map[string]any{"type": "Resource", "resource": map[string]any{"name": "cpu", "target": map[string]any{"type": "Utilization", "averageUtilization": float64(70)}}}}
	if got := at(v2, "spec.metrics"); !equalJSON(got, want) {
		t.Errorf("v2 metrics after a v1 update: %v; want %v", got, want)
	}
	if got := at(v2, "metadata.annotations"); got != nil {
		t.Errorf("v2 annotations %v; want none", got)
	}
}

// A Deployment whose replicas no manager owns (its applier left them
// out) is scaled untracked, so that a later apply of replicas has no
// conflict: kube's field manager skips an update of a Scale with no
// managedFields.
func TestScaleOfUnownedReplicasNotTracked(t *testing.T) {
	r := newRegistry(t)
	const path = "/apis/apps/v1/namespaces/default/deployments/d"
	apply := func(replicas string) (int, map[string]any) {
		code, _, body := do(t, r, "PATCH", path+"?fieldManager=me", "application/apply-patch+yaml",
			`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{`+replicas+`"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"nginx"}]}}}}`)
		return code, body
	}
	for _, replicas := range []string{`"replicas":2,`, ``} {
		if code, body := apply(replicas); code != 200 && code != 201 {
			t.Fatalf("apply %q: %d %v", replicas, code, body)
		}
	}
	if code, _, body := do(t, r, "PATCH", path+"/scale?fieldManager=scaler", "application/merge-patch+json", `{"spec":{"replicas":4}}`); code != 200 {
		t.Fatalf("scale: %d %v", code, body)
	}
	code, body := apply(`"replicas":2,`)
	if code != 200 {
		t.Fatalf("apply after scale: %d %v; want 200", code, body)
	}
	mfs, _ := at(body, "metadata.managedFields").([]any)
	if len(mfs) != 1 || at(mfs[0].(map[string]any), "manager") != "me" {
		t.Errorf("managedFields %v; want me's alone", mfs)
	}
}
