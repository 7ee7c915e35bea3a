package conformance

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/examples/apiserver/server"
	kschema "github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/storage/memory"
)

// TestRatchetingClients drives validation ratcheting (issue 8) with real
// clients in their default configuration: an object stored under the
// loose schema is updated under the tight one by client-go's dynamic
// client and by kubectl — an unrelated change goes through, a change to
// the invalid value is refused with the field named.
func TestRatchetingClients(t *testing.T) {
	opts := withStorage(t, server.Options{})
	if opts.Storage == nil {
		opts.Storage = memory.New(memory.Options{})
	}
	envFor := func(spec, status string) *env {
		crds, err := kschema.ParseCRDs([]byte(ratchetManifest(spec, status)))
		if err != nil {
			t.Fatal(err)
		}
		o := opts
		o.CRDs = crds
		reg, err := server.New(o)
		if err != nil {
			t.Fatalf("server.New: %v", err)
		}
		return newEnvFor(t, reg)
	}
	gvr := schema.GroupVersionResource{Group: "ratchet.example.com", Version: "v1", Resource: "ratchets"}
	loose := envFor(looseSpec, looseStatus)
	ns := loose.namespace(t, "ratchet-clients")
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "ratchet.example.com/v1", "kind": "Ratchet",
		"metadata": map[string]any{"name": "r"},
		"spec":     map[string]any{"size": "s", "name": "toolong", "other": "a"},
	}}
	if _, err := loose.dyn.Resource(gvr).Namespace(ns).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create under the loose schema: %v", err)
	}

	tight := envFor(tightSpec, tightStatus)
	rs := tight.dyn.Resource(gvr).Namespace(ns)
	cur, err := rs.Get(t.Context(), "r", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(cur.Object, "b", "spec", "other")
	cur, err = rs.Update(t.Context(), cur, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("client-go update of an unrelated field: %v; want it accepted (spec.name unchanged)", err)
	}
	_ = unstructured.SetNestedField(cur.Object, "longer!", "spec", "name")
	_, err = rs.Update(t.Context(), cur, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.name") {
		t.Fatalf("client-go update of the invalid field: %v; want 422 Invalid naming spec.name", err)
	}

	k := newKubectl(t, tight)
	k.mustRun(t, "patch", "ratchets.ratchet.example.com", "r", "-n", ns, "--type=merge", "-p", `{"spec":{"other":"c"}}`)
	_, stderr, err := k.run("patch", "ratchets.ratchet.example.com", "r", "-n", ns, "--type=merge", "-p", `{"spec":{"name":"worse!"}}`)
	msg := ""
	if err != nil {
		msg = err.Error() + stderr // kubectl's error, as it prints it
	}
	if !strings.Contains(msg, `The Ratchet "r" is invalid: spec.name: Too long`) {
		t.Fatalf("kubectl patch of the invalid field: err %v, stderr %q; want refused naming spec.name", err, stderr)
	}
}

// TestFormatsClients: string formats (issue 8) through client-go's
// dynamic client: a value that is not of its format is refused with
// kube's message, a valid one is stored.
func TestFormatsClients(t *testing.T) {
	manifest := ratchetManifest(`            properties:
              url: {type: string, format: uri}
              when: {type: string, format: date-time}
              mail: {type: string, format: email}`, looseStatus)
	crds, err := kschema.ParseCRDs([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := server.New(withStorage(t, server.Options{CRDs: crds}))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvFor(t, reg)
	ns := e.namespace(t, "formats")
	rs := e.dyn.Resource(schema.GroupVersionResource{Group: "ratchet.example.com", Version: "v1", Resource: "ratchets"}).Namespace(ns)
	obj := func(name string, spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "ratchet.example.com/v1", "kind": "Ratchet", "metadata": map[string]any{"name": name}, "spec": spec}}
	}
	if _, err := rs.Create(t.Context(), obj("good", map[string]any{"url": "https://example.com/x", "when": "2026-11-24T19:00:00Z", "mail": "a@example.com"}), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create with valid formats: %v", err)
	}
	_, err = rs.Create(t.Context(), obj("bad", map[string]any{"url": "::not a uri", "when": "yesterday", "mail": "nobody"}), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("create with invalid formats: %v; want 422 Invalid", err)
	}
	for _, want := range []string{`spec.url in body must be of type uri: "::not a uri"`, `spec.when in body must be of type date-time: "yesterday"`, `spec.mail in body must be of type email: "nobody"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q; want it to contain %q", err, want)
		}
	}
}
