package webhook

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/kapi-dev/kapi/registry/admission"
)

// renameConvert converts widgets between v1 (spec.size) and v2
// (spec.width), as a CRD's conversion webhook would.
func renameConvert(calls *int) func(ctx context.Context, group, resource string, obj map[string]any, version string) (map[string]any, error) {
	return func(_ context.Context, group, resource string, obj map[string]any, version string) (map[string]any, error) {
		*calls++
		if group != "example.com" || resource != "widgets" {
			return nil, errors.New("unexpected resource " + resource + "." + group)
		}
		out := map[string]any{}
		for k, v := range obj {
			out[k] = v
		}
		spec, _ := obj["spec"].(map[string]any)
		from, to := "width", "size"
		if version == "v2" {
			from, to = "size", "width"
		}
		out["spec"] = map[string]any{to: spec[from]}
		out["apiVersion"] = "example.com/" + version
		return out, nil
	}
}

// widgetHook is a webhook registered for example.com/v1 widgets only.
func widgetHook(s *server, name string) Webhook {
	h := hookOn(s, name)
	h.Rules = []Rule{{Operations: []string{"CREATE", "UPDATE"}, APIGroups: []string{"example.com"}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}}}
	return h
}

func widgetV2(width float64) *admission.Attributes {
	return &admission.Attributes{Operation: admission.Create, Group: "example.com", Version: "v2", Kind: "Widget", Resource: "widgets", Namespace: "default", Name: "w",
		Object: map[string]any{"apiVersion": "example.com/v2", "kind": "Widget", "metadata": map[string]any{"name": "w", "namespace": "default"}, "spec": map[string]any{"width": width}}}
}

var widgetVersions = func(group, resource string) []Version {
	return []Version{{Version: "v1", Kind: "Widget"}, {Version: "v2", Kind: "Widget"}}
}

// TestEquivalentConversion: with matchPolicy Equivalent, a webhook
// registered for v1 is sent a v2 request's object converted to v1 by
// Options.Convert, its patch is applied at v1 and the result converted
// back to v2; its match conditions see the v1 object.
func TestEquivalentConversion(t *testing.T) {
	var sent map[string]any
	s := newServer(t, func(rv review) any {
		sent, _ = rv.Request["object"].(map[string]any)
		return allow(rv, `[{"op":"replace","path":"/spec/size","value":7}]`)
	})
	calls := 0
	var seen ConditionInput
	d := New(Options{Equivalents: widgetVersions, Convert: renameConvert(&calls),
		Conditions: func([]MatchCondition, string) (Condition, error) {
			return conditionFunc(func(_ context.Context, in ConditionInput) (bool, error) { seen = in; return true, nil }), nil
		}})
	defer d.Close()
	h := widgetHook(s, "m.example.com")
	h.MatchConditions = []MatchCondition{{Name: "any", Expression: "true"}}
	if err := d.Set(MutatingKind, configuration("m", h)); err != nil {
		t.Fatal(err)
	}
	a := widgetV2(3)
	if err := d.Admit(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if sent["apiVersion"] != "example.com/v1" || !equalJSON(sent["spec"], map[string]any{"size": 3}) {
		t.Errorf("the webhook was sent %v; want example.com/v1 with spec.size 3", sent)
	}
	if seen.Version != "v1" || !equalJSON(seen.Object["spec"], map[string]any{"size": 3}) {
		t.Errorf("the match conditions saw %s %v; want v1 with spec.size 3", seen.Version, seen.Object)
	}
	if a.Object["apiVersion"] != "example.com/v2" || !equalJSON(a.Object["spec"], map[string]any{"width": 7}) {
		t.Errorf("the patched object: %v; want example.com/v2 with spec.width 7", a.Object)
	}
	if calls != 2 {
		t.Errorf("%d conversions; want 2 (to v1 once for the conditions and the call, back to v2)", calls)
	}
}

type conditionFunc func(ctx context.Context, in ConditionInput) (bool, error)

func (f conditionFunc) Match(ctx context.Context, in ConditionInput) (bool, error) { return f(ctx, in) }

// TestEquivalentConversionFails: a conversion that fails is kube's 500,
// whatever the failure policy, and the webhook is not called.
func TestEquivalentConversionFails(t *testing.T) {
	for _, tt := range []struct {
		name     string
		err      error
		wantCode int
		wantMsg  string
	}{
		{"plain error", errors.New("conversion webhook for example.com/v2, Kind=Widget failed: boom"), 500,
			"Internal error occurred: conversion webhook for example.com/v2, Kind=Widget failed: boom"},
		{"admission error", &admission.Error{Code: 500, Reason: "InternalError", Message: "Internal error occurred: as it is"}, 500, "Internal error occurred: as it is"},
	} {
		for _, policy := range []string{Fail, Ignore} {
			t.Run(tt.name+" "+policy, func(t *testing.T) {
				s := newServer(t, func(rv review) any { return allow(rv, "") })
				d := New(Options{Equivalents: widgetVersions, Convert: func(context.Context, string, string, map[string]any, string) (map[string]any, error) {
					return nil, tt.err
				}})
				defer d.Close()
				h := widgetHook(s, "v.example.com")
				h.FailurePolicy = &policy
				_ = d.Set(ValidatingKind, configuration("v", h))
				checkErr(t, d.Validate(context.Background(), widgetV2(3)), tt.wantCode, tt.wantMsg)
				if n := len(s.called()); n != 0 {
					t.Errorf("the webhook was called %d times; want none", n)
				}
			})
		}
	}
}

// TestNoneConversion: without Options.Convert, an Equivalent webhook is
// sent the object with its apiVersion rewritten, nothing else.
func TestNoneConversion(t *testing.T) {
	var sent map[string]any
	s := newServer(t, func(rv review) any {
		sent, _ = rv.Request["object"].(map[string]any)
		return allow(rv, "")
	})
	d := New(Options{Equivalents: widgetVersions})
	defer d.Close()
	_ = d.Set(ValidatingKind, configuration("v", widgetHook(s, "v.example.com")))
	if err := d.Validate(context.Background(), widgetV2(3)); err != nil {
		t.Fatal(err)
	}
	if sent["apiVersion"] != "example.com/v1" || !equalJSON(sent["spec"], map[string]any{"width": 3}) {
		t.Errorf("the webhook was sent %v; want example.com/v1 with spec.width 3", sent)
	}
}

// TestUnexpectedAnswer: an answer with a status code other than 2xx is
// reported as client-go's REST client reports it to kube's dispatcher.
func TestUnexpectedAnswer(t *testing.T) {
	for _, tt := range []struct {
		code        int
		contentType string
		body        string
		want        string
	}{
		{500, "text/plain; charset=utf-8", "oops\n", `an error on the server ("oops") has prevented the request from succeeding`},
		{502, "", " bad gateway ", `an error on the server ("bad gateway") has prevented the request from succeeding`},
		{500, "text/html", "<html>x</html>", `an error on the server ("<html>x</html>") has prevented the request from succeeding`},
		{500, "application/octet-stream", "\x00\x01", `an error on the server ("unknown") has prevented the request from succeeding`},
		{500, "application/json", `{"kind":"Status","status":"Failure","message":"from a Status"}`, "from a Status"},
		{404, "text/plain", "nope", "the server could not find the requested resource"},
		{400, "text/plain", "nope", "the server rejected our request for an unknown reason"},
		{403, "text/plain", "who are you", "who are you"},
		{422, "text/plain", "x", "the server rejected our request due to an error in our request"},
		{503, "text/plain", "x", "the server is currently unable to handle the request"},
		{418, "text/plain", "teapot", "the server responded with the status code 418 but did not return more information"},
		{301, "text/plain", "moved", "the server responded with the status code 301 but did not return more information"},
	} {
		if got := unexpectedAnswer(tt.code, tt.contentType, []byte(tt.body)); got != tt.want {
			t.Errorf("%d %s %q: got %q; want %q", tt.code, tt.contentType, tt.body, got, tt.want)
		}
	}
}

// TestStatusDetails: a denial carries the webhook's details or none (an
// empty map: no details, as kube's); a failed call kube's internal
// error's one cause.
func TestStatusDetails(t *testing.T) {
	s := newServer(t, func(rv review) any { return deny(rv, 403, "no") })
	d := New(Options{})
	defer d.Close()
	_ = d.Set(ValidatingKind, configuration("v", hookOn(s, "v.example.com")))
	var ae *admission.Error
	if err := d.Validate(context.Background(), newAttrs(admission.Create, nil)); !errors.As(err, &ae) || ae.Details == nil || len(ae.Details) != 0 {
		t.Errorf("denial: got %#v; want an *admission.Error with empty details", err)
	}
	down := newServer(t, func(rv review) any { return allow(rv, "") })
	down.Close()
	d2 := New(Options{})
	defer d2.Close()
	_ = d2.Set(ValidatingKind, configuration("v", hookOn(down, "v.example.com")))
	err := d2.Validate(context.Background(), newAttrs(admission.Create, nil))
	if !errors.As(err, &ae) || ae.Code != http.StatusInternalServerError {
		t.Fatalf("failed call: got %v; want a 500", err)
	}
	causes, _ := ae.Details["causes"].([]any)
	if len(causes) != 1 || "Internal error occurred: "+causes[0].(map[string]any)["message"].(string) != ae.Message {
		t.Errorf("failed call: details %v; want one cause with the message's text", ae.Details)
	}
}

// TestScaleKind: a write whose kind is its own (a Scale: KindGroup and
// KindVersion set) is reviewed with that kind and the resource's group
// and version, and is not converted for an Equivalent version.
func TestScaleKind(t *testing.T) {
	var sent map[string]any
	s := newServer(t, func(rv review) any {
		sent = rv.Request
		return allow(rv, "")
	})
	calls := 0
	d := New(Options{Equivalents: widgetVersions, Convert: renameConvert(&calls)})
	defer d.Close()
	h := widgetHook(s, "v.example.com")
	h.Rules[0].Resources = []string{"widgets/scale"}
	_ = d.Set(ValidatingKind, configuration("v", h))
	a := &admission.Attributes{Operation: admission.Update, Group: "example.com", Version: "v2", Kind: "Scale", KindGroup: "autoscaling", KindVersion: "v1",
		Resource: "widgets", Subresource: "scale", Namespace: "default", Name: "w",
		Object:    map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": map[string]any{"name": "w"}, "spec": map[string]any{"replicas": 3}},
		OldObject: map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": map[string]any{"name": "w"}, "spec": map[string]any{"replicas": 2}}}
	if err := d.Validate(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]any{
		"kind":        map[string]any{"group": "autoscaling", "version": "v1", "kind": "Scale"},
		"resource":    map[string]any{"group": "example.com", "version": "v1", "resource": "widgets"},
		"requestKind": map[string]any{"group": "autoscaling", "version": "v1", "kind": "Scale"},
		"subResource": "scale",
		"object":      a.Object,
	} {
		if !equalJSON(sent[field], want) {
			t.Errorf("review %s: got %v; want %v", field, sent[field], want)
		}
	}
	if calls != 0 {
		t.Errorf("%d conversions of a Scale; want none", calls)
	}
}
