package deleteopts

import (
	"net/url"
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		body, wantErr string
	}{
		{`{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Orphan"}`, ""},
		{`{"apiVersion":"example.com/v7"}`, ""},
		{`{"kind":"Status","apiVersion":"v1"}`, "converting (v1.Status) to (v1.DeleteOptions): unknown conversion"},
		{`{"kind":"Table","apiVersion":"meta.k8s.io/v1beta1"}`, "converting (v1.Table) to (v1.DeleteOptions): unknown conversion"},
		{`{"kind":"Widget","apiVersion":"v1"}`, `no kind "Widget" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111"`},
		{`{"apiVersion":"a/b/c"}`, "unexpected GroupVersion string: a/b/c"},
		{`{"gracePeriodSeconds":"x"}`, "json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64"},
		{`[]`, `couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" }`},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.body))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.wantErr {
			t.Errorf("Parse(%s): got error %q; want %q", tt.body, got, tt.wantErr)
		}
	}
}

func TestFromQuery(t *testing.T) {
	q, _ := url.ParseQuery("dryRun=All&gracePeriodSeconds=5&propagationPolicy=Foreground&orphanDependents=false")
	got, err := FromQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	if *got.GracePeriodSeconds != 5 || *got.PropagationPolicy != "Foreground" || *got.OrphanDependents || !reflect.DeepEqual(got.DryRun, []string{"All"}) {
		t.Errorf("got %+v; want the query's values", got)
	}
	for _, bad := range []string{"gracePeriodSeconds=x", "orphanDependents=maybe"} {
		q, _ := url.ParseQuery(bad)
		if _, err := FromQuery(q); err == nil {
			t.Errorf("FromQuery(%s): got no error; want one", bad)
		}
	}
}

func TestValidate(t *testing.T) {
	p, orphan, yes := "Sideways", true, true
	got := Validate(Options{PropagationPolicy: &p, OrphanDependents: &orphan, DryRun: []string{"Some"}})
	want := []Cause{
		{"FieldValueInvalid", "propagationPolicy", `Invalid value: "Sideways": orphanDependents and deletionPropagation cannot be both set`},
		{"FieldValueNotSupported", "propagationPolicy", `Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"`},
		{"FieldValueNotSupported", "dryRun", `Unsupported value: ["Some"]: supported values: "All"`},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q; want %q", got, want)
	}
	if got := Validate(Options{IgnoreStoreReadError: &yes, OrphanDependents: &orphan}); len(got) != 1 || got[0].Field != "ignoreStoreReadErrorWithClusterBreakingPotential" {
		t.Errorf("ignoreStoreReadError with orphanDependents: got %q; want one cause", got)
	}
	if got := Validate(Options{}); got != nil {
		t.Errorf("empty options: got %q; want none", got)
	}
}
