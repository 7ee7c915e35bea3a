package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/kapi-dev/kapi/codec/protobuf"
	"github.com/kapi-dev/kapi/internal/validation"
	"github.com/kapi-dev/kapi/registry/admission"
	"github.com/kapi-dev/kapi/registry/admission/webhook"
	"github.com/kapi-dev/kapi/registry/internal/table"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/storage"
)

// Admission webhooks (EXT-9): admissionregistration.k8s.io/v1
// MutatingWebhookConfigurations and ValidatingWebhookConfigurations are
// served as cluster-scoped resources, validated as kube validates them,
// and fed (a watch per resource, rbac_feed.go) into the registry's
// webhook.Dispatcher, which the write pipeline calls after the Go
// admission chain: mutating webhooks after Options.Admission's mutating
// hooks, validating webhooks after its validating hooks. A write of a
// configuration returns once the dispatcher has it, so the next request
// is admitted by it:
//
//	POST validatingwebhookconfigurations deny-blue (revision 42)
//	  → AfterWrite waits until the feed has applied revision 42
//	  → 201; the next create of a ConfigMap is sent to deny-blue's webhook

const admissionregistrationGroup = "admissionregistration.k8s.io"

// webhookResources are the two webhook configuration kinds.
func (r *Registry) webhookResources() []*Resource {
	res := func(kind, plural string, s *schema.Schema) *Resource {
		res := &Resource{Group: admissionregistrationGroup, Version: "v1", Kind: kind, Plural: plural, Schema: s, Generation: true,
			Categories: []string{"api-extensions"},
			Columns: []Column{
				{Name: "Webhooks", Type: "integer", Description: "Webhooks indicates the number of webhooks registered in this configuration", Value: func(obj Object) any {
					l, _ := obj["webhooks"].([]any)
					return int64(len(l))
				}},
				{Name: "Age", Type: "date", DeclaredType: "string", JSONPath: ".metadata.creationTimestamp", Description: table.Created.Description},
			}}
		res.Strategy = Strategy{
			ValidateCreate: func(_ context.Context, obj Object) []FieldError {
				return r.validateWebhookConfiguration(kind, obj, nil)
			},
			ValidateUpdate: func(_ context.Context, obj, old Object) []FieldError {
				return r.validateWebhookConfiguration(kind, obj, old)
			},
		}
		res.Strategy.AfterWrite, res.Strategy.AfterDelete = r.feedSeen(&r.hookFeeds, res), r.feedGone(&r.hookFeeds, res)
		return res
	}
	out := []*Resource{
		res(webhook.MutatingKind, "mutatingwebhookconfigurations", sharedSchemas.mutatingWebhookConfiguration()),
		res(webhook.ValidatingKind, "validatingwebhookconfigurations", sharedSchemas.validatingWebhookConfiguration()),
	}
	out[0].Protobuf, out[1].Protobuf = protobuf.MutatingWebhookConfiguration, protobuf.ValidatingWebhookConfiguration
	return out
}

// validateWebhookConfiguration is kube's validation of a configuration,
// and its match conditions compiled (refused without a compiler).
func (r *Registry) validateWebhookConfiguration(kind string, obj, old Object) []FieldError {
	errs := webhook.Validate(kind, obj, old)
	if len(errs) > 0 {
		return errs
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return []FieldError{{Type: validation.TypeInternal, Field: "webhooks", Detail: err.Error()}}
	}
	c, err := webhook.ParseConfiguration(b)
	if err != nil {
		return []FieldError{{Type: validation.TypeInvalid, Field: "webhooks", Value: validation.OmitValue, Detail: err.Error()}}
	}
	return r.webhooks.Check(c)
}

// newWebhooks is the registry's dispatcher: namespaces' labels from
// storage, equivalent versions from the served resources.
func (r *Registry) newWebhooks() *webhook.Dispatcher {
	return webhook.New(webhook.Options{
		ResolveService:  r.opts.ResolveWebhookService,
		Conditions:      r.opts.WebhookConditions,
		NamespaceLabels: r.namespaceLabels,
		Equivalents:     r.equivalents,
		Convert:         r.webhookConvert,
		Authorizer:      r.authorizer,
	})
}

// webhookConvert is obj, of resource plural of group, as version: the
// resource's own conversion (a CRD's conversion webhook, or None), as
// kube converts the object an Equivalent webhook is sent:
//
//	POST /apis/example.com/v2/…/widgets {spec: {colour: red}}
//	  → a webhook registered for example.com/v1 widgets only
//	  → it is sent {apiVersion: example.com/v1, spec: {color: red}}
func (r *Registry) webhookConvert(ctx context.Context, group, plural string, obj map[string]any, version string) (map[string]any, error) {
	var res *Resource
	for _, gv := range r.tab.Load().groups[group] {
		for _, x := range gv.resources {
			if x.Plural == plural && x.Version == version {
				res = x
			}
		}
	}
	if res == nil {
		return nil, fmt.Errorf("no kind is registered for resource %s in version %s", plural, version)
	}
	c, _ := deepCopy(obj).(map[string]any)
	out, err := res.convert(ctx, []Object{c}, res.GroupVersion())
	if err != nil {
		var se *StatusError
		if errors.As(err, &se) {
			return nil, &admission.Error{Code: se.Status.Code, Reason: se.Status.Reason, Message: se.Status.Message, Err: err}
		}
		return nil, err
	}
	return out[0], nil
}

// namespaceLabels are the stored labels of namespace name; a namespace
// that does not exist is kube's 404.
func (r *Registry) namespaceLabels(ctx context.Context, name string) (map[string]string, error) {
	cur, err := r.store.Get(ctx, r.ns.objectKey("", name), storage.GetOptions{})
	if err != nil {
		if storage.IsNotFound(err) {
			return nil, &admission.Error{Code: http.StatusNotFound, Reason: "NotFound", Message: `namespaces "` + name + `" not found`, Err: err,
				Details: map[string]any{"name": name, "kind": "namespaces"}}
		}
		return nil, err
	}
	obj, err := decodeStored(cur.Value, cur.Revision)
	if err != nil {
		return nil, err
	}
	labels := map[string]string{}
	raw, _ := obj.Meta()["labels"].(map[string]any)
	for k, v := range raw {
		if s, ok := v.(string); ok {
			labels[k] = s
		}
	}
	return labels, nil
}

// equivalents are the versions a resource of group is served as.
func (r *Registry) equivalents(group, plural string) []webhook.Version {
	var out []webhook.Version
	for _, gv := range r.tab.Load().groups[group] {
		for _, res := range gv.resources {
			if res.Plural == plural {
				out = append(out, webhook.Version{Version: res.Version, Kind: res.Kind})
			}
		}
	}
	return out
}

// webhookSink feeds the dispatcher.
type webhookSink struct{ d *webhook.Dispatcher }

func (s webhookSink) SetJSON(kind string, value []byte) error {
	c, err := webhook.ParseConfiguration(value)
	if err != nil {
		return err
	}
	return s.d.Set(kind, c)
}

func (s webhookSink) Delete(kind, _, name string) error {
	s.d.Delete(kind, name)
	return nil
}
