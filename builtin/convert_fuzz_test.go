package builtin

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kapi-dev/kapi/registry"
)

// The HPA and Event conversions read what clients wrote, annotations
// holding JSON included: whatever object and whatever versions, they
// convert without a panic and answer an object of the asked version (or
// an error, never a half-converted object with the old apiVersion).
func FuzzConvertKinds(f *testing.F) {
	f.Add(`{"apiVersion":"autoscaling/v1","spec":{"targetCPUUtilizationPercentage":50,"maxReplicas":3},"metadata":{"annotations":{"autoscaling.alpha.kubernetes.io/metrics":"[{\"type\":\"Pods\",\"pods\":{\"metricName\":\"qps\",\"targetAverageValue\":\"10\"}}]"}}}`, "autoscaling/v2")
	f.Add(`{"apiVersion":"autoscaling/v2","spec":{"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":50}}},{"type":"External","external":{"metric":{"name":"q","selector":{"matchLabels":{"a":"b"}}},"target":{"type":"Value","value":"1"}}}],"behavior":{"scaleUp":{"stabilizationWindowSeconds":0}}},"status":{"currentMetrics":[{"type":"Pods","pods":{"metric":{"name":"qps"},"current":{"averageValue":"3"}}}],"conditions":[{"type":"AbleToScale","status":"True"}]}}`, "autoscaling/v1")
	f.Add(`{"apiVersion":"autoscaling/v1","metadata":{"annotations":{"autoscaling.alpha.kubernetes.io/metrics":"nope","autoscaling.alpha.kubernetes.io/behavior":"{","autoscaling.alpha.kubernetes.io/conditions":"[1]"}}}`, "autoscaling/v2")
	f.Add(`{"apiVersion":"v1","involvedObject":{"kind":"Pod","name":"p"},"source":{"component":"c"},"count":2,"firstTimestamp":"2026-01-01T00:00:00Z","message":"m"}`, "events.k8s.io/v1")
	f.Add(`{"apiVersion":"events.k8s.io/v1","regarding":"x","deprecatedSource":[],"note":7,"eventTime":null}`, "v1")
	f.Fuzz(func(t *testing.T, body, to string) {
		var o registry.Object
		if json.Unmarshal([]byte(body), &o) != nil || o == nil {
			return
		}
		convert := convertHPA
		if to == "v1" || to == eventsV1 {
			convert = convertEvent
		}
		out, err := convert(context.Background(), []registry.Object{o}, to)
		if err != nil {
			return
		}
		if len(out) != 1 || out[0]["apiVersion"] != to {
			t.Fatalf("converted to %s: got %v", to, out)
		}
		if _, err := json.Marshal(out[0]); err != nil {
			t.Fatalf("converted object does not encode: %v", err)
		}
	})
}
