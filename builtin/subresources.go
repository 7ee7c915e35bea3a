package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/kapi-dev/kapi/codec/protobuf"
	"github.com/kapi-dev/kapi/internal/validation"
	"github.com/kapi-dev/kapi/registry"
)

// The subresources that write: pods/binding (the scheduler's: sets
// spec.nodeName once, and the PodScheduled condition), pods/eviction
// (deletes the pod if its PodDisruptionBudget allows) and
// serviceaccounts/token (a TokenRequest answered with a token of
// Options.Tokens). They write through a registry.Client, so through the
// registry's one write path; Register connects them to the registry.

// decodeBody reads a subresource's body, JSON or protobuf (md).
func decodeBody(req registry.SubresourceRequest, md protoreflect.MessageDescriptor) (map[string]any, error) {
	if strings.HasPrefix(req.ContentType, "application/vnd.kubernetes.protobuf") {
		_, raw, err := protobuf.DecodeEnvelope(req.Body)
		if err == nil {
			var m map[string]any
			if m, err = protobuf.Unmarshal(md, raw); err == nil {
				return m, nil
			}
		}
		return nil, statusError(400, "BadRequest", "the request body is not a valid "+string(md.Name())+": "+err.Error())
	}
	d := json.NewDecoder(bytes.NewReader(req.Body))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil || m == nil {
		return nil, statusError(400, "BadRequest", "the request body is not a valid "+string(md.Name())+" JSON object")
	}
	return m, nil
}

// binding is the scheduler's write: a pod is bound to a node once.
type bindingKey struct{}

func (b *behaviours) bind(ctx context.Context, req registry.SubresourceRequest) (any, error) {
	if req.Method != "POST" {
		return nil, methodNotAllowed()
	}
	md, err := message("k8s.io.api.core.v1.Binding")
	if err != nil {
		return nil, err
	}
	body, err := decodeBody(req, md)
	if err != nil {
		return nil, err
	}
	if n := getString(body, "metadata", "name"); n != req.Name {
		return nil, statusError(400, "BadRequest", "name in URL does not match name in Binding object")
	}
	node := getString(body, "target", "name")
	if k := getString(body, "target", "kind"); (k != "" && k != "Node") || node == "" {
		return nil, invalidError("Binding", req.Name, registry.FieldError{Type: validation.TypeRequired, Field: "target.name"})
	}
	if cur := getString(req.Object, "spec", "nodeName"); cur != "" {
		se := statusError(409, "Conflict", "Operation cannot be fulfilled on pods/binding \""+req.Name+"\": pod "+req.Name+" is already assigned to node \""+cur+"\"")
		se.Status.Details = &registry.StatusDetails{Name: req.Name, Kind: "pods/binding"} // kube's NewConflict
		return nil, se
	}
	pods, err := b.client("v1", "pods")
	if err != nil {
		return nil, err
	}
	pod := map[string]any(req.Object)
	ensureMap(pod, "spec")["nodeName"] = node
	// kube's assignPod writes storage directly: no managedFields entry,
	// no generation bump
	ctx = registry.DirectWrite(ctx)
	bound, err := pods.Update(context.WithValue(ctx, bindingKey{}, true), req.Namespace, &pod)
	if err != nil {
		return nil, err
	}
	status := ensureMap(*bound, "status")
	var conds []any
	for _, c := range getList(status, "conditions") {
		if getString(c, "type") != "PodScheduled" {
			conds = append(conds, c)
		}
	}
	status["conditions"] = append(conds, map[string]any{"type": "PodScheduled", "status": "True", "lastProbeTime": nil,
		"lastTransitionTime": now(ctx)})
	if _, err := pods.UpdateStatus(ctx, req.Namespace, bound); err != nil {
		return nil, err
	}
	return success(), nil
}

// methodNotAllowed is kube's 405 for a verb the subresource does not
// serve.
func methodNotAllowed() error {
	se := statusError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
	se.Status.Details = &registry.StatusDetails{}
	return se
}

// success is the Status a binding or eviction answers.
func success() map[string]any {
	return map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Success", "code": 201}
}

func (b *behaviours) evict(ctx context.Context, req registry.SubresourceRequest) (any, error) {
	if req.Method != "POST" {
		return nil, methodNotAllowed()
	}
	md, err := message("k8s.io.api.policy.v1.Eviction")
	if err != nil {
		return nil, err
	}
	body, err := decodeBody(req, md)
	if err != nil {
		return nil, err
	}
	if n := getString(body, "metadata", "name"); n != req.Name {
		return nil, statusError(400, "BadRequest", "name in URL does not match name in Eviction object")
	}
	pods, err := b.client("v1", "pods")
	if err != nil {
		return nil, err
	}
	if err := b.checkDisruptionBudget(ctx, req); err != nil {
		return nil, err
	}
	if err := pods.Delete(ctx, req.Namespace, req.Name); err != nil {
		return nil, err
	}
	return success(), nil
}

// checkDisruptionBudget is kube's eviction rule: a Running pod that a
// PodDisruptionBudget selects is evicted only while the budget allows a
// disruption (its status, which kube's disruption controller keeps and a
// test writes here, says so), and the eviction spends one. Pods that are
// not Running (kapi's stay Pending) or are being deleted ignore budgets,
// as in kube.
func (b *behaviours) checkDisruptionBudget(ctx context.Context, req registry.SubresourceRequest) error {
	pod := map[string]any(req.Object)
	if getString(pod, "status", "phase") != "Running" || getString(pod, "metadata", "deletionTimestamp") != "" {
		return nil
	}
	pdbs, err := b.client("policy/v1", "poddisruptionbudgets")
	if err != nil {
		return err
	}
	list, err := pdbs.List(ctx, req.Namespace, registry.ListOptions{})
	if err != nil {
		return err
	}
	labels := stringMap(getMap(pod, "metadata", "labels"))
	var matched []map[string]any
	for _, pdb := range list.Items {
		if sel := getMap(pdb, "spec", "selector"); len(sel) > 0 && selects(sel, labels) {
			matched = append(matched, pdb)
		}
	}
	switch {
	case len(matched) == 0:
		return nil
	case len(matched) > 1:
		return statusError(500, "InternalError", "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.")
	}
	pdb := matched[0]
	name := getString(pdb, "metadata", "name")
	tooMany := func(msg string) error {
		se := statusError(429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.")
		se.Status.Details = &registry.StatusDetails{Causes: []registry.StatusCause{{Type: "DisruptionBudget", Message: msg}}, RetryAfterSeconds: 10}
		return se
	}
	if intAt(pdb, "status", "observedGeneration") < intAt(pdb, "metadata", "generation") {
		return tooMany("The disruption budget " + name + " is still being processed by the server.")
	}
	allowed := intAt(pdb, "status", "disruptionsAllowed")
	if allowed <= 0 {
		return tooMany(fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", name,
			intAt(pdb, "status", "desiredHealthy"), intAt(pdb, "status", "currentHealthy")))
	}
	status := ensureMap(pdb, "status")
	status["disruptionsAllowed"] = num(allowed - 1)
	ensureMap(status, "disruptedPods")[req.Name] = now(ctx)
	_, err = pdbs.UpdateStatus(ctx, req.Namespace, &pdb)
	return err
}

// token answers a TokenRequest for the service account.
func (b *behaviours) token(ctx context.Context, req registry.SubresourceRequest) (any, error) {
	if req.Method != "POST" {
		return nil, methodNotAllowed()
	}
	if b.tokens == nil {
		return nil, statusError(404, "NotFound", "the server could not find the requested resource")
	}
	body, err := decodeBody(req, protobuf.TokenRequest)
	if err != nil {
		return nil, err
	}
	ttl := int64(3600)
	if v := get(body, "spec", "expirationSeconds"); v != nil {
		ttl = intAt(body, "spec", "expirationSeconds")
	}
	if ttl < 600 {
		// The TokenRequest has no name: kube names the kind with its group.
		se := invalidError("TokenRequest.authentication.k8s.io", "", registry.FieldError{Type: validation.TypeInvalid, Field: "spec.expirationSeconds", Value: ttl, Detail: "may not specify a duration less than 10 minutes"})
		se.Status.Details.Group, se.Status.Details.Kind = "authentication.k8s.io", "TokenRequest"
		return nil, se
	}
	var auds []string
	for _, a := range getList(body, "spec", "audiences") {
		if s, ok := a.(string); ok {
			auds = append(auds, s)
		}
	}
	tok, exp, err := b.tokens.issue(req.Namespace, req.Name, req.Object.UID(), auds, time.Duration(ttl)*time.Second)
	if err != nil {
		return nil, err
	}
	spec := ensureMap(body, "spec")
	spec["expirationSeconds"] = num(ttl)
	// kube's create handler records the request (defaulted) in
	// managedFields, before its REST defaults the audiences.
	fields := map[string]any{}
	for k := range spec {
		fields["f:"+k] = map[string]any{}
	}
	if len(auds) == 0 {
		spec["audiences"] = []any{b.tokens.issuer}
	}
	def(spec, "boundObjectRef", nil)
	body["apiVersion"], body["kind"] = "authentication.k8s.io/v1", "TokenRequest"
	meta := ensureMap(body, "metadata")
	ts := now(ctx) // the registry's clock; the token's times are the Tokens' (TokenOptions.Now)
	meta["name"], meta["namespace"], meta["uid"] = req.Name, req.Namespace, req.Object.UID()
	meta["creationTimestamp"] = ts
	meta["managedFields"] = []any{map[string]any{"manager": req.Manager, "operation": "Update", "apiVersion": "authentication.k8s.io/v1",
		"time": ts, "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:spec": fields}, "subresource": "token"}}
	body["status"] = map[string]any{"token": tok, "expirationTimestamp": exp.Format(time.RFC3339)}
	return body, nil
}

// client is an in-process client of a kind, once Register has run.
func (b *behaviours) client(gv, plural string) (*registry.Client[map[string]any], error) {
	if b.reg == nil {
		return nil, statusError(500, "InternalError", "Internal error occurred: builtin: the kinds' subresources need builtin.Register")
	}
	return registry.NewClient[map[string]any](b.reg, gv, plural)
}
