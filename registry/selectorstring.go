package registry

import (
	"sort"
	"strings"
)

// selectorString is the label selector v as kube's Scale writes it in
// status.selector: a string stays as it is; a LabelSelector
// ({matchLabels, matchExpressions}, an apps/v1 workload's spec.selector)
// or a map of labels (a ReplicationController's) is written as
// labels.Selector's String does: its requirements sorted by key, joined
// by ",": "app=web,tier in (a,b),!legacy". ok is false for anything else.
func selectorString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case map[string]any:
		if _, ls := x["matchLabels"]; !ls {
			if _, ok := x["matchExpressions"]; !ok {
				return requirementsString(x, nil)
			}
		}
		ml, _ := x["matchLabels"].(map[string]any)
		me, _ := x["matchExpressions"].([]any)
		return requirementsString(ml, me)
	}
	return "", false
}

func requirementsString(labels map[string]any, exprs []any) (string, bool) {
	type req struct{ key, text string }
	var reqs []req
	for k, v := range labels {
		s, ok := v.(string)
		if !ok {
			return "", false
		}
		reqs = append(reqs, req{k, k + "=" + s})
	}
	for _, e := range exprs {
		m, _ := e.(map[string]any)
		key, _ := m["key"].(string)
		op, _ := m["operator"].(string)
		var vals []string
		for _, v := range asList(m["values"]) {
			s, _ := v.(string)
			vals = append(vals, s)
		}
		sort.Strings(vals)
		switch op {
		case "In":
			reqs = append(reqs, req{key, key + " in (" + strings.Join(vals, ",") + ")"})
		case "NotIn":
			reqs = append(reqs, req{key, key + " notin (" + strings.Join(vals, ",") + ")"})
		case "Exists":
			reqs = append(reqs, req{key, key})
		case "DoesNotExist":
			reqs = append(reqs, req{key, "!" + key})
		default:
			return "", false
		}
	}
	sort.SliceStable(reqs, func(i, j int) bool { return reqs[i].key < reqs[j].key })
	parts := make([]string, len(reqs))
	for i, r := range reqs {
		parts[i] = r.text
	}
	return strings.Join(parts, ","), true
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
