package webhook

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzDecodeResponse: any body (read as JSON or YAML, as a call reads
// it) decodes to a response or an error wrapping
// ErrInvalidResponse; never a panic, and a response has the request's
// UID (v1) and no patch a validating webhook may not send.
func FuzzDecodeResponse(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","allowed":true}}`), true)
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","allowed":true,"patch":"W10=","patchType":"JSONPatch"}}`), true)
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"u","allowed":false,"status":{"code":403,"message":"no"}}}`), false)
	f.Add([]byte(`{"response":{"uid":"x"}}`), false)
	f.Add([]byte(`<html>`), true)
	f.Add([]byte("apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\nresponse: {uid: u, allowed: true}\n"), false)
	f.Fuzz(func(t *testing.T, body []byte, mutating bool) {
		// As a call reads an answer: JSON or YAML, then the review.
		if j, err := reviewJSON(body); err == nil {
			body = j
		}
		for _, v := range []string{"v1", "v1beta1"} {
			r, err := DecodeResponse(body, "u", v, mutating)
			if err != nil {
				if !errors.Is(err, ErrInvalidResponse) {
					t.Fatalf("%s: error %v does not wrap ErrInvalidResponse", v, err)
				}
				continue
			}
			if v == "v1" && r.UID != "u" {
				t.Fatalf("accepted uid %q", r.UID)
			}
			if !mutating && (len(r.Patch) > 0 || r.PatchType != nil) {
				t.Fatalf("%s: a validating webhook's patch accepted", v)
			}
		}
	})
}

// FuzzValidate: any JSON object parses and validates without a panic, as
// a configuration or as an update of another.
func FuzzValidate(f *testing.F) {
	f.Add([]byte(`{"webhooks":[{"name":"a.b.c","clientConfig":{"url":"https://h/x"},"sideEffects":"None","admissionReviewVersions":["v1"],"rules":[{"operations":["*"],"apiGroups":["*"],"apiVersions":["*"],"resources":["*/*"]}]}]}`))
	f.Add([]byte(`{"webhooks":[{"clientConfig":{"service":{"namespace":"n","name":"s","path":"//","port":0}},"matchConditions":[{"name":"","expression":""}],"objectSelector":{"matchExpressions":[{"key":"","operator":"In"}]}}]}`))
	f.Add([]byte(`{"webhooks":"x"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var obj map[string]any
		if json.Unmarshal(b, &obj) != nil {
			return
		}
		for _, kind := range []string{MutatingKind, ValidatingKind} {
			_ = Validate(kind, obj, nil)
			_ = Validate(kind, obj, obj)
		}
		if c, err := ParseConfiguration(b); err == nil {
			d := New(Options{})
			_ = d.Set(MutatingKind, c)
			_ = d.Check(c)
			d.Close()
		}
	})
}

// FuzzUnexpectedAnswer: any status code, content type and body of a
// non-2xx answer make a message, never a panic, quoting at most 2 KiB of
// the body.
func FuzzUnexpectedAnswer(f *testing.F) {
	f.Add(500, "text/plain", []byte("oops\n"))
	f.Add(404, "", []byte(""))
	f.Add(500, "application/json", []byte(`{"kind":"Status","status":"Failure","message":"m"}`))
	f.Add(418, "text/html; charset=\"", []byte("<html>"))
	f.Fuzz(func(t *testing.T, code int, contentType string, body []byte) {
		msg := unexpectedAnswer(code, contentType, body)
		if len(msg) > 2048*6+200 && !json.Valid(body) { // %q escapes a byte to at most 6 bytes
			t.Fatalf("a message of %d bytes for a body of %d", len(msg), len(body))
		}
	})
}
