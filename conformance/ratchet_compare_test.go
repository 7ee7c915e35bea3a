package conformance

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/cel"
	"github.com/kapi-dev/kapi/examples/apiserver/server"
	"github.com/kapi-dev/kapi/registry"
	kschema "github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/storage/memory"
)

// Validation ratcheting (kube's CRDValidationRatcheting, on by default
// since 1.30), compared with the reference server: objects are created
// under a loose schema, the schema is tightened (kube: the CRD is
// updated; kapi: a second registry with the tight CRD over the same
// storage), and updates of the now-invalid objects must get the same
// answers from both: accepted when the invalid values are unchanged,
// the same 422 when they change to other invalid values. Issue 8.

// ratchetCRD is the CRD of the ratcheting comparison, with {spec} and
// {status} the properties of its spec and status.
const ratchetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ratchets.ratchet.example.com
spec:
  group: ratchet.example.com
  names: {plural: ratchets, singular: ratchet, kind: Ratchet, listKind: RatchetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
{spec}
          status:
            type: object
            properties:
{status}
`

// The loose and the tight schema: the same fields, with constraints added.
const (
	looseSpec = `            properties:
              name: {type: string}
              other: {type: string}
              size: {type: string}
              count: {type: integer}
              labels: {type: object, additionalProperties: {type: string}}
              items:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [k]
                items: {type: object, required: [k], properties: {k: {type: string}, v: {type: string}}}
              tags: {type: array, x-kubernetes-list-type: set, items: {type: string}}
              atomic: {type: array, items: {type: string}}`
	tightSpec = `            required: [size]
            properties:
              name: {type: string, maxLength: 5}
              other: {type: string}
              size: {type: string, enum: [s, m]}
              count: {type: integer, maximum: 3}
              labels: {type: object, additionalProperties: {type: string, maxLength: 2}}
              items:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [k]
                items: {type: object, required: [k], properties: {k: {type: string}, v: {type: string, maxLength: 2}}}
              tags: {type: array, x-kubernetes-list-type: set, items: {type: string, maxLength: 2}}
              atomic: {type: array, items: {type: string, maxLength: 2}}`
	looseStatus = `              phase: {type: string}
              note: {type: string}
              count: {type: integer}`
	tightStatus = `              phase: {type: string, enum: [ok]}
              note: {type: string}
              count: {type: integer, minimum: 0}`
)

func ratchetManifest(spec, status string) string {
	return strings.NewReplacer("{spec}", spec, "{status}", status).Replace(ratchetCRD)
}

const ratchets = "/apis/ratchet.example.com/v1/namespaces/{ns}/ratchets"

// ratchetJSON is a Ratchet with the JSON spec (and status, if not
// empty), at resourceVersion {rv} when rv is set.
func ratchetJSON(name, spec, status string, rv bool) string {
	md := `{"name":"` + name + `"`
	if rv {
		md += `,"resourceVersion":"{rv}"`
	}
	md += `}`
	s := `{"apiVersion":"ratchet.example.com/v1","kind":"Ratchet","metadata":` + md + `,"spec":` + spec
	if status != "" {
		s += `,"status":` + status
	}
	return s + `}`
}

// ratchetProbe is an object the loose schema accepts and the tight one
// refuses: a dry-run create of it tells which schema kube serves.
func ratchetProbe() kreq {
	return kreq{Method: http.MethodPost, Path: ratchets, Query: "dryRun=All", ContentType: "application/json",
		Body: ratchetJSON("probe", `{"size":"huge"}`, "", false)}
}

// setKubeCRD creates or updates the ratcheting CRD on the reference
// server and waits until a dry-run create of the probe gets want: kube
// serves a changed schema a moment after the CRD update.
func setKubeCRD(t *testing.T, cfg *rest.Config, manifest string, want int) {
	t.Helper()
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict([]byte(manifest), &crd); err != nil {
		t.Fatalf("decode manifest: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	for {
		cur, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			_, err = crds.Create(ctx, &crd, metav1.CreateOptions{})
		case err == nil:
			next := cur.DeepCopy()
			next.Spec = crd.Spec
			_, err = crds.Update(ctx, next, metav1.UpdateOptions{})
		}
		if err == nil {
			break
		}
		if !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("set CRD %s: %v", crd.Name, err)
		}
	}
	for {
		r, err := do(ctx, cfg, "ratchet-probe", "", ratchetProbe())
		if err == nil && r.Code == want {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the reference server does not answer %d to the probe after %s: %v %+v", want, waitTimeout, err, r.Status)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ratchetScenario creates objects under the loose schema (create), then
// updates them under the tight one (update).
type ratchetScenario struct {
	name           string
	create, update []step
}

func TestCompareRatcheting(t *testing.T) {
	kube := kubeServer(t)
	setKubeCRD(t, kube, ratchetManifest(looseSpec, looseStatus), http.StatusCreated)

	kapiFor := func(spec, status string, st server.Options) *env {
		crds, err := kschema.ParseCRDs([]byte(ratchetManifest(spec, status)))
		if err != nil {
			t.Fatal(err)
		}
		st.Registry = registry.Options{CEL: cel.Compile}
		st.CRDs = crds
		reg, err := server.New(st)
		if err != nil {
			t.Fatalf("server.New: %v", err)
		}
		return newEnvFor(t, reg)
	}
	opts := withStorage(t, server.Options{})
	if opts.Storage == nil {
		opts.Storage = memory.New(memory.Options{})
	}
	loose := &comparison{kapi: kapiFor(looseSpec, looseStatus, opts), kube: kube}

	put := func(name, spec string, want int) step {
		return step{req: kreq{Method: http.MethodPut, Path: ratchets + "/" + name, ContentType: "application/json", Body: ratchetJSON(name, spec, "", true)}, want: want, body: true}
	}
	putStatus := func(name, spec, status string, want int) step {
		return step{req: kreq{Method: http.MethodPut, Path: ratchets + "/" + name + "/status", ContentType: "application/json", Body: ratchetJSON(name, spec, status, true)}, want: want, body: true}
	}
	patch := func(name, ct, body string, want int) step {
		return step{req: kreq{Method: http.MethodPatch, Path: ratchets + "/" + name, ContentType: ct, Body: body}, want: want, body: true}
	}
	post := func(name, spec string) step {
		return step{req: kreq{Method: http.MethodPost, Path: ratchets, ContentType: "application/json", Body: ratchetJSON(name, spec, "", false)}, want: http.StatusCreated}
	}
	const ok, invalid = http.StatusOK, http.StatusUnprocessableEntity
	merge := "application/merge-patch+json"
	scenarios := []ratchetScenario{
		{name: "unchanged invalid field", create: []step{post("a", `{"size":"s","name":"toolong","other":"a"}`)}, update: []step{
			put("a", `{"size":"s","name":"toolong","other":"b"}`, ok),
			put("a", `{"size":"s","name":"longer!","other":"b"}`, invalid),
			put("a", `{"size":"s","name":"fine","other":"b"}`, ok),
		}},
		{name: "merge and JSON patches", create: []step{post("b", `{"size":"huge","count":10}`)}, update: []step{
			patch("b", merge, `{"spec":{"other":"x"}}`, ok),
			patch("b", "application/json-patch+json", `[{"op":"replace","path":"/spec/other","value":"y"}]`, ok),
			patch("b", merge, `{"spec":{"count":11}}`, invalid),
			patch("b", merge, `{"spec":{"size":"bigger"}}`, invalid),
		}},
		{name: "apply to an existing object", create: []step{post("c", `{"size":"s","name":"toolong"}`)}, update: []step{
			{req: kreq{Method: http.MethodPatch, Path: ratchets + "/c", Query: "fieldManager=other", ContentType: "application/apply-patch+yaml",
				Body: `{"apiVersion":"ratchet.example.com/v1","kind":"Ratchet","metadata":{"name":"c"},"spec":{"other":"z"}}`}, want: ok, body: true},
			{req: kreq{Method: http.MethodPatch, Path: ratchets + "/c", Query: "fieldManager=other&force=true", ContentType: "application/apply-patch+yaml",
				Body: `{"apiVersion":"ratchet.example.com/v1","kind":"Ratchet","metadata":{"name":"c"},"spec":{"other":"z","name":"toolonger"}}`}, want: invalid},
		}},
		{name: "required field added", create: []step{post("d", `{"other":"a"}`)}, update: []step{
			patch("d", merge, `{"metadata":{"labels":{"x":"y"}}}`, ok),
			put("d", `{"other":"b"}`, invalid),
		}},
		{name: "map values", create: []step{post("e", `{"size":"s","labels":{"a":"long","b":"x"}}`)}, update: []step{
			put("e", `{"size":"s","labels":{"a":"long","b":"y"}}`, ok),
			put("e", `{"size":"s","labels":{"a":"long","b":"y","c":"long"}}`, invalid),
		}},
		{name: "list-map items by key", create: []step{post("f", `{"size":"s","items":[{"k":"a","v":"long"},{"k":"b","v":"x"}]}`)}, update: []step{
			put("f", `{"size":"s","items":[{"k":"b","v":"y"},{"k":"a","v":"long"}]}`, ok),
			put("f", `{"size":"s","items":[{"k":"b","v":"y"},{"k":"a","v":"longer"}]}`, invalid),
		}},
		{name: "set items are not correlated", create: []step{post("g", `{"size":"s","tags":["long","a"]}`)}, update: []step{
			put("g", `{"size":"s","tags":["long","a"],"other":"x"}`, ok),
			put("g", `{"size":"s","tags":["long","b"],"other":"x"}`, invalid),
		}},
		{name: "atomic items are not correlated", create: []step{post("h", `{"size":"s","atomic":["long","a"]}`)}, update: []step{
			put("h", `{"size":"s","atomic":["long","a"],"other":"x"}`, ok),
			put("h", `{"size":"s","atomic":["long","a","b"],"other":"x"}`, invalid),
		}},
		{name: "status subresource", create: []step{post("i", `{"size":"s","name":"toolong"}`), putStatus("i", `{"size":"s","name":"toolong"}`, `{"phase":"bad"}`, ok)}, update: []step{
			putStatus("i", `{"size":"s","name":"toolong"}`, `{"phase":"bad","note":"n"}`, ok),
			putStatus("i", `{"size":"s","name":"toolong"}`, `{"phase":"worse","note":"n"}`, invalid),
			// kube checks a status write with the schema of the status
			// alone: its messages name the path below status.
			putStatus("i", `{"size":"s","name":"toolong"}`, `{"phase":"bad","note":"n","count":-1}`, invalid),
			put("i", `{"size":"s","name":"toolong","other":"o"}`, ok),
			put("i", `{"size":"s","name":"longer!"}`, invalid),
		}},
	}
	type state struct{ ns, kapiRV, kubeRV string }
	states := make([]state, len(scenarios))
	for i, sc := range scenarios {
		ns := loose.kapi.namespace(t, fmt.Sprintf("ratchet-%d", namespaces.Add(1)))
		states[i].ns = ns
		for j, st := range sc.create {
			kapi, kube := loose.compare(t, ns, states[i].kapiRV, states[i].kubeRV, j, st)
			states[i].kapiRV, states[i].kubeRV = lastRV(kapi, states[i].kapiRV), lastRV(kube, states[i].kubeRV)
		}
	}

	setKubeCRD(t, kube, ratchetManifest(tightSpec, tightStatus), http.StatusUnprocessableEntity)
	tight := &comparison{kapi: kapiFor(tightSpec, tightStatus, opts), kube: kube}
	for i, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			s := &states[i]
			for j, st := range sc.update {
				kapi, kube := tight.compare(t, s.ns, s.kapiRV, s.kubeRV, j, st)
				s.kapiRV, s.kubeRV = lastRV(kapi, s.kapiRV), lastRV(kube, s.kubeRV)
			}
		})
	}
}
