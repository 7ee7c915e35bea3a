package patch

import (
	"bytes"
	"encoding/json"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// LastAppliedAnnotation is kubectl's client-side apply annotation. A
// server-side apply by the manager "kubectl" keeps it up to date when the
// object has it, and may take over the fields it lists without conflict
// (kube's upgrade path from client-side to server-side apply).
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// totalAnnotationSizeLimit is kube's limit on the sum of annotation key and
// value lengths; a last-applied annotation that would pass it is dropped.
const totalAnnotationSizeLimit = 256 * 1024

func annotations(obj map[string]any) map[string]any {
	md, _ := obj["metadata"].(map[string]any)
	a, _ := md["annotations"].(map[string]any)
	return a
}

func hasLastApplied(obj map[string]any) bool {
	s, _ := annotations(obj)[LastAppliedAnnotation].(string)
	return s != ""
}

// buildLastApplied encodes the apply configuration (smd form) without the
// annotation itself, as kube's unstructured JSON encoder does (with a
// trailing newline).
func buildLastApplied(cfg map[string]any) string {
	c := make(map[string]any, len(cfg))
	for k, v := range cfg {
		c[k] = v
	}
	if md, ok := cfg["metadata"].(map[string]any); ok {
		mc := make(map[string]any, len(md))
		for k, v := range md {
			mc[k] = v
		}
		c["metadata"] = mc
		if a, ok := md["annotations"].(map[string]any); ok {
			ac := make(map[string]any, len(a))
			strs := true
			for k, v := range a {
				_, isStr := v.(string)
				strs = strs && isStr
				if k != LastAppliedAnnotation {
					ac[k] = v
				}
			}
			if strs {
				mc["annotations"] = ac
			} else {
				delete(mc, "annotations")
			}
		}
	}
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(c) // smd-form values always encode
	return b.String()
}

// setLastApplied sets the annotation on obj (which the caller owns), or
// removes it when the annotations would exceed kube's size limit.
func setLastApplied(obj map[string]any, value string) {
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		md = map[string]any{}
		obj["metadata"] = md
	}
	a, ok := md["annotations"].(map[string]any)
	if !ok {
		a = map[string]any{}
	} else {
		c := make(map[string]any, len(a)+1)
		for k, v := range a {
			c[k] = v
		}
		a = c
	}
	a[LastAppliedAnnotation] = value
	size := 0
	for k, v := range a {
		s, _ := v.(string)
		size += len(k) + len(s)
	}
	if size > totalAnnotationSizeLimit {
		delete(a, LastAppliedAnnotation)
	}
	md["annotations"] = a
}

// allowedConflictsFromLastApplied returns the fields the last-applied
// annotation of live sets to their live values: kubectl owned them by
// client-side apply.
func (r *request) allowedConflictsFromLastApplied(liveTV *typed.TypedValue, live map[string]any) (*fieldpath.Set, bool) {
	s, _ := annotations(live)[LastAppliedAnnotation].(string)
	if s == "" {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var last map[string]any
	if err := dec.Decode(&last); err != nil || last == nil {
		return nil, false
	}
	if k, _ := last["kind"].(string); k == "" {
		return nil, false // kube's unstructured decoder requires a kind
	}
	if av, _ := last["apiVersion"].(string); av != r.m.apiVersion {
		return nil, false
	}
	lastTV, err := r.m.typ.FromUnstructured(toSMD(last))
	if err != nil {
		return nil, false
	}
	set, err := lastTV.ToFieldSet()
	if err != nil {
		return nil, false
	}
	cmp, err := lastTV.Compare(liveTV)
	if err != nil {
		return nil, false
	}
	return set.Difference(cmp.Modified).Difference(cmp.Added).Difference(cmp.Removed), true
}
