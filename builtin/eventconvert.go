package builtin

import (
	"context"

	"github.com/kapi-dev/kapi/registry"
)

// events.k8s.io/v1 Events are core v1 Events, stored with them (kube
// stores both at /events, as core v1): a resource of each group reads
// what the other wrote, converted as kube converts them
// (pkg/apis/events/v1/conversion.go). The fields keep their values under
// other names, and each form has the zero values Go's JSON writes for
// its own struct (null times, an empty source and object reference,
// core's reportingComponent and reportingInstance always, as "" when
// unset):
//
//	events.k8s.io/v1: {regarding: {kind: Deployment, name: web}, note: scaled up,
//	                   reportingController: example.com/c, deprecatedSource: {}, …}
//	v1:               {involvedObject: {kind: Deployment, name: web}, message: scaled up,
//	                   reportingComponent: example.com/c, source: {}, …}

const eventsV1 = "events.k8s.io/v1"

// eventRenames are the fields whose names differ: events.k8s.io's, core's.
var eventRenames = [][2]string{
	{"regarding", "involvedObject"},
	{"note", "message"},
	{"reportingController", "reportingComponent"},
	{"deprecatedSource", "source"},
	{"deprecatedFirstTimestamp", "firstTimestamp"},
	{"deprecatedLastTimestamp", "lastTimestamp"},
	{"deprecatedCount", "count"},
}

// convertEvent is the registry.ConvertFunc of events.k8s.io Events.
func convertEvent(_ context.Context, objs []registry.Object, apiVersion string) ([]registry.Object, error) {
	for _, o := range objs {
		from, _ := o["apiVersion"].(string)
		switch {
		case from == apiVersion:
		case apiVersion == eventsV1:
			renameEventFields(o, 1, 0)
			eventShape(o, []string{"eventTime", "deprecatedFirstTimestamp", "deprecatedLastTimestamp"},
				[]string{"regarding", "deprecatedSource"}, nil,
				[]string{"reportingController", "reportingInstance", "action", "reason", "note", "type"}, "deprecatedCount")
		default:
			renameEventFields(o, 0, 1)
			eventShape(o, []string{"eventTime", "firstTimestamp", "lastTimestamp"},
				[]string{"involvedObject", "source"}, []string{"reportingComponent", "reportingInstance"},
				[]string{"reason", "message", "type", "action"}, "count")
		}
		o["apiVersion"] = apiVersion
	}
	return objs, nil
}

// renameEventFields moves each field of eventRenames from its name at
// index from to its name at index to.
func renameEventFields(o registry.Object, from, to int) {
	for _, f := range eventRenames {
		if v, ok := o[f[from]]; ok {
			o[f[to]] = v
			delete(o, f[from])
		}
	}
}

// eventShape gives o the zero values of its version's Go struct: times
// that are null when unset, structs that are {} when unset, strings that
// are there as "" (or dropped when empty: omitempty), and a count
// dropped when 0.
func eventShape(o registry.Object, times, structs, always, omitEmpty []string, count string) {
	for _, f := range times {
		def(o, f, nil)
	}
	for _, f := range structs {
		if o[f] == nil {
			o[f] = map[string]any{}
		}
	}
	for _, f := range always {
		def(o, f, "")
	}
	for _, f := range omitEmpty {
		if s, ok := o[f].(string); ok && s == "" {
			delete(o, f)
		}
	}
	if v, ok := o[count]; ok && (v == nil || intAt(o, count) == 0) {
		delete(o, count)
	}
}
