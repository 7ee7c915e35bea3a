package builtin

import (
	"slices"
	"strings"
	"testing"
)

// Kube's Job status validation (validateJobStatusUpdate): each row is a
// job's spec, its stored status and the status a write sends, and the
// causes kube answers (the corpus's "job status" cases compare them with
// kube-apiserver).
func TestJobStatusValidation(t *testing.T) {
	const (
		t1       = `"2026-01-01T00:00:00Z"`
		t2       = `"2026-01-01T00:05:00Z"`
		nonIdx   = `{"completions":1,"parallelism":1,"completionMode":"NonIndexed"}`
		indexed  = `{"completions":3,"parallelism":1,"completionMode":"Indexed"}`
		perIndex = `{"completions":3,"parallelism":1,"completionMode":"Indexed","backoffLimitPerIndex":1}`
		complete = `{"startTime":` + t1 + `,"completionTime":` + t2 + `,"conditions":[{"type":"SuccessCriteriaMet","status":"True"},{"type":"Complete","status":"True"}]}`
		failed   = `{"startTime":` + t1 + `,"conditions":[{"type":"FailureTarget","status":"True"},{"type":"Failed","status":"True"}]}`
	)
	for _, tt := range []struct {
		name, spec, old, new string
		want                 []string
	}{
		{"start", nonIdx, `{}`, `{"startTime":` + t1 + `,"active":1,"ready":1}`, nil},
		{"complete", nonIdx, `{"startTime":` + t1 + `}`, complete, nil},
		{"failed", nonIdx, `{}`, failed, nil},
		{"complete without times", nonIdx, `{}`, `{"conditions":[{"type":"Complete","status":"True"}]}`, []string{
			`status.completionTime: Required value: completionTime is required for Complete jobs`,
			`status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition`,
			`status.startTime: Required value: startTime is required for finished job`}},
		{"complete before start", nonIdx, `{}`, `{"startTime":` + t2 + `,"completionTime":` + t1 + `,"conditions":[{"type":"SuccessCriteriaMet","status":"True"},{"type":"Complete","status":"True"}]}`, []string{
			"status.completionTime: Invalid value: " + t1 + ": must be equal to or after `startTime`"}},
		{"completionTime without Complete", nonIdx, `{}`, `{"startTime":` + t1 + `,"completionTime":` + t2 + `}`, []string{
			`status.completionTime: Invalid value: ` + t2 + `: cannot set completionTime when there is no Complete=True condition`}},
		{"failed without FailureTarget", nonIdx, `{}`, `{"startTime":` + t1 + `,"conditions":[{"type":"Failed","status":"True"}]}`, []string{
			`status.conditions: Invalid value: cannot set Failed=True condition without the FailureTarget=true condition`}},
		{"finished with active, terminating and uncounted pods", nonIdx, `{}`, `{"startTime":` + t1 + `,"active":1,"terminating":2,"uncountedTerminatedPods":{"failed":["a"]},"conditions":[{"type":"FailureTarget","status":"True"},{"type":"Failed","status":"True"}]}`, []string{
			`status.active: Invalid value: 1: active>0 is invalid for finished job`,
			`status.uncountedTerminatedPods: Invalid value: {"Succeeded":null,"Failed":["a"]}: must be empty for finished job`,
			`status.terminating: Invalid value: 2: terminating>0 is invalid for finished job`}},
		{"negative counts", nonIdx, `{}`, `{"active":-1,"succeeded":-1,"failed":-1,"ready":-1,"terminating":-1}`, []string{
			`status.active: Invalid value: -1: must be greater than or equal to 0`, `status.succeeded: Invalid value: -1: must be greater than or equal to 0`,
			`status.failed: Invalid value: -1: must be greater than or equal to 0`, `status.ready: Invalid value: -1: must be greater than or equal to 0`,
			`status.terminating: Invalid value: -1: must be greater than or equal to 0`,
			`status.failed: Invalid value: -1: cannot decrease the failed counter`, `status.succeeded: Invalid value: -1: cannot decrease the succeeded counter`}},
		{"more ready than active", nonIdx, `{}`, `{"active":1,"ready":2}`, []string{`status.ready: Invalid value: 2: cannot set more ready pods than active`}},
		{"more ready than active, unchanged", nonIdx, `{"active":1,"ready":2}`, `{"active":1,"ready":2,"failed":1}`, nil},
		{"uncounted pods empty and duplicate", nonIdx, `{}`, `{"uncountedTerminatedPods":{"succeeded":["a",""],"failed":["a"]}}`, []string{
			`status.uncountedTerminatedPods.succeeded[1]: Invalid value: "": must not be empty`,
			`status.uncountedTerminatedPods.failed[0]: Duplicate value: "a"`}},
		{"counters decrease", nonIdx, `{"succeeded":2,"failed":2}`, `{"succeeded":1,"failed":1}`, []string{
			`status.failed: Invalid value: 1: cannot decrease the failed counter`, `status.succeeded: Invalid value: 1: cannot decrease the succeeded counter`}},
		{"indexed succeeded scaled down", `{"completions":3,"parallelism":3,"completionMode":"Indexed"}`, `{"succeeded":2}`, `{"succeeded":1}`, nil},
		{"startTime changed", nonIdx, `{"startTime":` + t1 + `}`, `{"startTime":` + t2 + `}`, []string{
			`status.startTime: Invalid value: ` + t2 + `: field is immutable for unsuspended job once set`}},
		{"startTime removed", nonIdx, `{"startTime":` + t1 + `}`, `{}`, []string{
			`status.startTime: Invalid value: null: field is immutable for unsuspended job once set`}},
		{"startTime of a suspended job", `{"completions":1,"suspend":true}`, `{"startTime":` + t1 + `}`, `{"startTime":` + t2 + `}`, nil},
		{"finished suspended job with zero completions", `{"completions":0,"suspend":true}`, `{}`, `{"completionTime":` + t2 + `,"conditions":[{"type":"SuccessCriteriaMet","status":"True"},{"type":"Complete","status":"True"}]}`, nil},
		{"completionTime changed", nonIdx, complete, `{"startTime":` + t1 + `,"completionTime":"2026-01-01T00:06:00Z","conditions":[{"type":"SuccessCriteriaMet","status":"True"},{"type":"Complete","status":"True"}]}`, []string{
			`status.completionTime: Invalid value: "2026-01-01T00:06:00Z": field is immutable`}},
		{"terminal conditions removed", nonIdx, complete, `{"startTime":` + t1 + `,"conditions":[]}`, []string{
			`status.conditions: Invalid value: cannot disable the terminal Complete=True condition`,
			`status.conditions: Invalid value: cannot disable the SuccessCriteriaMet=True condition`}},
		{"Failed removed", nonIdx, failed, `{"startTime":` + t1 + `,"conditions":[{"type":"FailureTarget","status":"True"}]}`, []string{
			`status.conditions: Invalid value: cannot disable the terminal Failed=True condition`}},
		{"SuccessCriteriaMet after Complete", nonIdx, `{"startTime":` + t1 + `,"completionTime":` + t2 + `,"conditions":[{"type":"Complete","status":"True"}]}`, complete, []string{
			`status.conditions: Invalid value: cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions`}},
		{"SuccessCriteriaMet with Failed and FailureTarget", nonIdx, failed, `{"startTime":` + t1 + `,"conditions":[{"type":"SuccessCriteriaMet","status":"True"},{"type":"FailureTarget","status":"True"},{"type":"Failed","status":"True"}]}`, []string{
			`status.conditions: Invalid value: cannot set SuccessCriteriaMet=True and Failed=true conditions`,
			`status.conditions: Invalid value: cannot set SuccessCriteriaMet=True and FailureTarget=true conditions`}},
		{"completedIndexes of a non-indexed job", nonIdx, `{}`, `{"completedIndexes":"0"}`, []string{
			`status.completedIndexes: Invalid value: "0": cannot set non-empty completedIndexes when non-indexed completion mode`}},
		{"completedIndexes", indexed, `{}`, `{"completedIndexes":"0,2"}`, nil},
		{"completedIndexes too large", indexed, `{}`, `{"completedIndexes":"1-3"}`, []string{
			`status.completedIndexes: Invalid value: "1-3": error parsing completedIndexes: too large index: "3"`}},
		{"completedIndexes out of order", indexed, `{}`, `{"completedIndexes":"2,0"}`, []string{
			`status.completedIndexes: Invalid value: "2,0": error parsing completedIndexes: non-increasing order, previous: 2, current: 0`}},
		{"completedIndexes not numbers", indexed, `{}`, `{"completedIndexes":"a"}`, []string{
			`status.completedIndexes: Invalid value: "a": error parsing completedIndexes: cannot convert string to integer for index: "a"`}},
		{"completedIndexes three parts", indexed, `{}`, `{"completedIndexes":"0-1-2"}`, []string{
			`status.completedIndexes: Invalid value: "0-1-2": error parsing completedIndexes: the fragment "0-1-2" violates the requirement that an index interval can have at most two parts separated by '-'`}},
		{"completedIndexes unchanged", indexed, `{"completedIndexes":"5"}`, `{"completedIndexes":"5","active":1}`, nil},
		{"failedIndexes without backoffLimitPerIndex", indexed, `{}`, `{"failedIndexes":"0"}`, []string{
			`status.failedIndexes: Invalid value: "0": cannot set non-null failedIndexes when backoffLimitPerIndex is null`}},
		{"failedIndexes", perIndex, `{}`, `{"completedIndexes":"0","failedIndexes":"1-2"}`, nil},
		{"failedIndexes overlap", perIndex, `{}`, `{"completedIndexes":"0-1","failedIndexes":"1-2"}`, []string{
			`status.failedIndexes: Invalid value: "1-2": failedIndexes and completedIndexes overlap at index: 1`}},
		{"failedIndexes format", perIndex, `{}`, `{"failedIndexes":"1,1"}`, []string{
			`status.failedIndexes: Invalid value: "1,1": error parsing failedIndexes: non-increasing order, previous: 1, current: 1`}},
		{"complete with successPolicy without SuccessCriteriaMet", `{"completions":1,"successPolicy":{"rules":[{"succeededCount":1}]}}`, `{"startTime":` + t1 + `,"completionTime":` + t2 + `,"conditions":[{"type":"Complete","status":"True"}]}`,
			`{"startTime":` + t1 + `,"completionTime":` + t2 + `,"conditions":[{"type":"Complete","status":"True"}]}`, []string{
				`status.conditions: Invalid value: cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			old := object(t, `{"metadata":{"name":"j"},"spec":`+tt.spec+`,"status":`+tt.old+`}`)
			o := object(t, `{"metadata":{"name":"j"},"spec":`+tt.spec+`,"status":`+tt.new+`}`)
			var got []string
			for _, e := range validateJobStatusUpdate(o, old) {
				got = append(got, e.Error())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("causes:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// FuzzJobIndexes: the completedIndexes/failedIndexes parser (kube's
// validateIndexesFormat and validateFailedIndexesNotOverlapCompleted)
// never panics, accepts only indexes below completions in increasing
// order, and finds no overlap of a valid list with itself missing.
func FuzzJobIndexes(f *testing.F) {
	for _, s := range []string{"", "0", "1,3-5,7", "2,0", "a", "0-1-2", "1-", "-1", "5-3", "9999999999999"} {
		f.Add(s, "1-2", int32(8))
	}
	f.Fuzz(func(t *testing.T, s, other string, completions int32) {
		err := jobIndexesFormat(s, completions)
		_ = jobIndexesOverlap(s, other, completions)
		if err != nil || s == "" {
			return
		}
		last := int32(-1)
		for _, part := range strings.Split(s, ",") {
			x, y, err := jobIndexInterval(part, completions)
			if err != nil || x <= last || y < x || y >= completions {
				t.Fatalf("%q accepted with completions %d: interval %q is %d-%d (%v) after %d", s, completions, part, x, y, err, last)
			}
			last = y
		}
		if jobIndexesOverlap(s, s, completions) == nil {
			t.Fatalf("%q does not overlap itself", s)
		}
	})
}
