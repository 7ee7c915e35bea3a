package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kapi-dev/kapi/internal/validation"
	"github.com/kapi-dev/kapi/registry/admission"
	"github.com/kapi-dev/kapi/registry/authz"
)

// Options configure a Dispatcher.
type Options struct {
	// ResolveService is the URL of the service a webhook's
	// clientConfig.service names (its path is the reference's path).
	// Nil: calling such a webhook fails (by its failure policy) with
	// "no service resolver". kube-apiserver resolves
	// https://<name>.<namespace>.svc:<port>; an embedding program usually
	// resolves to a loopback address.
	ResolveService func(ctx context.Context, ref ServiceReference) (*url.URL, error)
	// NamespaceLabels are the labels of the named namespace, for
	// namespaceSelector; an *admission.Error is the answer as it is (a
	// 404 for a namespace that does not exist).
	NamespaceLabels func(ctx context.Context, name string) (map[string]string, error)
	// Equivalents are the versions and kinds a resource of a group is
	// served as (matchPolicy Equivalent); nil: only the request's.
	Equivalents func(group, resource string) []Version
	// Convert is obj, an object of resource of group, converted to
	// version, for a webhook that matches the request through another
	// version of its resource (matchPolicy Equivalent): the webhook is
	// sent, its matchConditions see and its patch applies to the object
	// as that version, and the patched object is converted back. It must
	// not change obj; an *admission.Error is the answer as it is, any
	// other error kube's 500. Nil: kube's "None" conversion (apiVersion
	// and kind rewritten, nothing else).
	Convert func(ctx context.Context, group, resource string, obj map[string]any, version string) (map[string]any, error)
	// Conditions compiles matchConditions; nil refuses a configuration
	// that has them (Check), rather than ignore them.
	Conditions ConditionCompiler
	// Authorizer is what matchConditions' authorizer variable asks, as
	// the request's user (kube's: the server's authorizer); nil leaves
	// it unbound, and an expression that calls it fails.
	Authorizer authz.Authorizer
	// MaxResponseBytes bounds a webhook's answer (default 10 MiB); a
	// larger one is a failed call.
	MaxResponseBytes int64
}

// Version is one version a resource is served as, and its kind there.
type Version struct {
	Version, Kind string
}

// ConditionCompiler compiles a webhook's matchConditions; failurePolicy
// (Fail or Ignore) says what an evaluation error is: a denial, or no
// match. An expression that does not compile is a *ConditionError.
type ConditionCompiler func(conditions []MatchCondition, failurePolicy string) (Condition, error)

// ConditionError is a match condition that does not compile: the
// Index-th of its webhook's, and why.
type ConditionError struct {
	Index      int
	Expression string
	Detail     string
}

func (e *ConditionError) Error() string {
	return fmt.Sprintf("matchConditions[%d].expression: %s", e.Index, e.Detail)
}

// Condition is a webhook's compiled matchConditions: Match reports
// whether all hold. An error fails the write closed (403), as kube does.
type Condition interface {
	Match(ctx context.Context, in ConditionInput) (bool, error)
}

// ConditionInput is what matchConditions are evaluated on: the write
// (its objects as the webhook would be sent them), the group, version
// and kind of the object as the webhook would be sent it, the version of
// the resource the webhook matched (Version when empty), and the
// authorizer the authorizer variable asks (nil: unbound).
type ConditionInput struct {
	*admission.Attributes
	Group, Version, Kind string
	ResourceVersion      string
	Authorizer           authz.Authorizer
}

// Dispatcher calls the webhooks of the configurations it is given (Set),
// as kube-apiserver's MutatingAdmissionWebhook and
// ValidatingAdmissionWebhook plugins: Admit calls the mutating webhooks
// in order, Validate the validating ones concurrently. It is an
// admission.Mutator and an admission.Validator. Safe for concurrent
// use; Set and Delete take effect for the next call.
type Dispatcher struct {
	opts Options

	mu      sync.Mutex                    // serialises Set and Delete
	configs map[string]map[string]*config // kind → name → configuration

	// The webhooks by kind, configurations sorted by name, each
	// configuration's webhooks in order: replaced whole on change.
	mutating, validating atomic.Pointer[[]*hook]
}

var (
	_ admission.Mutator   = (*Dispatcher)(nil)
	_ admission.Validator = (*Dispatcher)(nil)
)

// config is one configuration's webhooks and their HTTP clients.
type config struct {
	hooks   []*hook
	clients []*http.Client
}

// hook is one webhook, ready to be called.
type hook struct {
	Webhook
	mutating      bool
	configuration string
	id            string // configuration/webhook: its identity for reinvocation
	client        *http.Client
	target        string // the URL with ?timeout=; "": a service reference, resolved per call
	timeout       time.Duration
	conditions    Condition
}

// New returns a Dispatcher without configurations.
func New(opts Options) *Dispatcher {
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = 10 << 20
	}
	d := &Dispatcher{opts: opts, configs: map[string]map[string]*config{MutatingKind: {}, ValidatingKind: {}}}
	d.mutating.Store(&[]*hook{})
	d.validating.Store(&[]*hook{})
	return d
}

// Empty reports whether there is no webhook at all (writes then skip
// building what a webhook would be sent).
func (d *Dispatcher) Empty() bool {
	return len(*d.mutating.Load()) == 0 && len(*d.validating.Load()) == 0
}

// Mutates reports whether the dispatcher has a mutating webhook.
func (d *Dispatcher) Mutates() bool { return len(*d.mutating.Load()) > 0 }

// Check reports what makes a configuration unusable beyond Validate:
// match conditions that do not compile (kube's messages), or that no
// Options.Conditions can compile.
func (d *Dispatcher) Check(c *Configuration) []validation.Error {
	var errs []validation.Error
	for i, w := range c.Webhooks {
		_, err := d.compile(withDefaults(w, false))
		var ce *ConditionError
		switch {
		case err == nil:
		case errors.As(err, &ce):
			errs = append(errs, validation.Error{Type: validation.TypeInvalid, Field: fmt.Sprintf("webhooks[%d].matchConditions[%d].expression", i, ce.Index),
				Value: ce.Expression, Detail: ce.Detail})
		default:
			errs = append(errs, validation.Error{Type: validation.TypeForbidden, Field: fmt.Sprintf("webhooks[%d].matchConditions", i), Detail: err.Error()})
		}
	}
	return errs
}

// ErrNoConditions is the error of a webhook with matchConditions when the
// Dispatcher has no Options.Conditions.
var ErrNoConditions = errors.New("matchConditions need a CEL compiler: set the webhook Options.Conditions (registry Options.CEL) to evaluate them")

func (d *Dispatcher) compile(w Webhook) (Condition, error) {
	if len(w.MatchConditions) == 0 {
		return nil, nil
	}
	if d.opts.Conditions == nil {
		return nil, ErrNoConditions
	}
	return d.opts.Conditions(w.MatchConditions, *w.FailurePolicy)
}

// Set adds or replaces the configuration of kind (MutatingKind or
// ValidatingKind) named c.Metadata.Name. A webhook whose match
// conditions do not compile is left out (the configuration's validation
// refuses them before they are stored).
func (d *Dispatcher) Set(kind string, c *Configuration) error {
	if kind != MutatingKind && kind != ValidatingKind {
		return fmt.Errorf("webhook: unknown configuration kind %q", kind)
	}
	cfg := &config{}
	clients := map[string]*http.Client{} // one per CA bundle
	for _, w := range c.Webhooks {
		w = withDefaults(w, kind == MutatingKind)
		h := &hook{Webhook: w, mutating: kind == MutatingKind, configuration: c.Metadata.Name, id: c.Metadata.Name + "/" + w.Name,
			timeout: time.Duration(*w.TimeoutSeconds) * time.Second}
		cond, err := d.compile(w)
		if err != nil || (w.ClientConfig.URL == nil && w.ClientConfig.Service == nil) {
			continue // refused by validation; not stored through the API
		}
		h.conditions = cond
		if w.ClientConfig.URL != nil {
			u, err := url.Parse(*w.ClientConfig.URL)
			if err != nil {
				continue
			}
			h.target = withTimeout(u, h.timeout)
		}
		key := string(w.ClientConfig.CABundle)
		if clients[key] == nil {
			cl, err := NewClient(w.ClientConfig.CABundle)
			if err != nil {
				cl = &http.Client{Transport: failingTransport{err}}
			}
			clients[key] = cl
			cfg.clients = append(cfg.clients, cl)
		}
		h.client = clients[key]
		cfg.hooks = append(cfg.hooks, h)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	old := d.configs[kind][c.Metadata.Name]
	d.configs[kind][c.Metadata.Name] = cfg
	d.publish(kind)
	old.close()
	return nil
}

// Delete removes the configuration of kind named name.
func (d *Dispatcher) Delete(kind, name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	old := d.configs[kind][name]
	delete(d.configs[kind], name)
	d.publish(kind)
	old.close()
}

// Close closes the idle connections of every configuration's clients.
func (d *Dispatcher) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, byName := range d.configs {
		for _, c := range byName {
			c.close()
		}
	}
}

func (c *config) close() {
	if c == nil {
		return
	}
	for _, cl := range c.clients {
		cl.CloseIdleConnections()
	}
}

// publish makes the hooks of kind visible to calls; d.mu is held.
func (d *Dispatcher) publish(kind string) {
	names := make([]string, 0, len(d.configs[kind]))
	for n := range d.configs[kind] {
		names = append(names, n)
	}
	sort.Strings(names)
	var hooks []*hook
	for _, n := range names {
		hooks = append(hooks, d.configs[kind][n].hooks...)
	}
	if kind == MutatingKind {
		d.mutating.Store(&hooks)
	} else {
		d.validating.Store(&hooks)
	}
}

// withDefaults is w with kube's defaults (SetDefaults_MutatingWebhook,
// …ValidatingWebhook, …Rule, …ServiceReference) where it has none: a
// stored configuration has them already.
func withDefaults(w Webhook, mutating bool) Webhook {
	def := func(p **string, v string) {
		if *p == nil {
			*p = &v
		}
	}
	def(&w.FailurePolicy, Fail)
	def(&w.MatchPolicy, Equivalent)
	if mutating {
		def(&w.ReinvocationPolicy, Never)
	}
	if w.TimeoutSeconds == nil {
		t := int32(10)
		w.TimeoutSeconds = &t
	}
	w.Rules = slices.Clone(w.Rules)
	for i := range w.Rules {
		def(&w.Rules[i].Scope, "*")
	}
	return w
}

// Admit calls the mutating webhooks that match a, in order, and applies
// their patches to a.Object: both of kube's rounds (AdmitRound), with no
// other hook between them.
func (d *Dispatcher) Admit(ctx context.Context, a *admission.Attributes) error {
	var r Reinvocation
	if err := d.AdmitRound(ctx, a, &r); err != nil || !r.Again() {
		return err
	}
	return d.AdmitRound(ctx, a, &r)
}

// Reinvocation is the state of one write's mutating webhooks across
// kube's two admission rounds. Its zero value starts the first round.
//
// Worked example: webhooks A (reinvocationPolicy IfNeeded) then B
// (Never). Round 1 calls A, then B, whose patch changes the object: A
// was called before the change, so it is due again, and Again reports
// true. The caller runs its other mutating hooks again, then round 2,
// which calls A only. Had the other hooks changed the object between
// the rounds, A would be due too even without B's change.
type Reinvocation struct {
	round    int
	again    bool
	invoked  map[string]bool // IfNeeded webhooks called since the last change
	reinvoke map[string]bool // those to call in round 2
	last     []byte          // the object as round 1 left it
}

// Again reports whether a webhook changed the object in round 1: kube
// then runs the mutating hooks again (the registry its Go hooks, then
// round 2 of the webhooks).
func (r *Reinvocation) Again() bool { return r.round == 1 && r.again }

// AdmitRound runs the next round of the mutating webhooks that match a:
// round 1 calls each, round 2 only those with reinvocationPolicy
// IfNeeded called before something changed the object (kube's
// reinvocation).
func (d *Dispatcher) AdmitRound(ctx context.Context, a *admission.Attributes, r *Reinvocation) error {
	hooks := *d.mutating.Load()
	round := r.round
	r.round++
	if len(hooks) == 0 || exempt(a) || round > 1 {
		return nil
	}
	if r.invoked == nil {
		r.invoked, r.reinvoke = map[string]bool{}, map[string]bool{}
	}
	if round == 1 {
		if now, _ := json.Marshal(a.Object); !bytes.Equal(now, r.last) {
			r.requireReinvoke() // changed by the hooks between the rounds
		}
	}
	for _, h := range hooks {
		if round == 1 && !r.reinvoke[h.id] {
			continue
		}
		b := d.newBodies(a)
		inv, err := d.shouldCall(ctx, h, a, b)
		if err != nil {
			return err
		}
		if inv == nil {
			continue
		}
		changed, err := d.mutate(ctx, h, inv, a, b)
		if changed {
			r.requireReinvoke()
			r.again = true
		}
		if *h.ReinvocationPolicy == IfNeeded {
			r.invoked[h.id] = true
		}
		if err = byPolicy(ctx, h, err); err != nil {
			return err
		}
	}
	if round == 0 && r.again {
		r.last, _ = json.Marshal(a.Object)
	}
	return nil
}

// requireReinvoke makes the IfNeeded webhooks called so far due again.
func (r *Reinvocation) requireReinvoke() {
	for id := range r.invoked {
		r.reinvoke[id] = true
	}
	clear(r.invoked)
}

// Validate calls the validating webhooks that match a, concurrently, and
// returns the first denial or failure (by failure policy) to arrive.
func (d *Dispatcher) Validate(ctx context.Context, a *admission.Attributes) error {
	hooks := *d.validating.Load()
	if len(hooks) == 0 || exempt(a) {
		return nil
	}
	type call struct {
		h   *hook
		inv *invocation
	}
	var calls []call
	bodies := d.newBodies(a)
	for _, h := range hooks {
		inv, err := d.shouldCall(ctx, h, a, bodies)
		if err != nil {
			return err
		}
		if inv != nil {
			calls = append(calls, call{h, inv})
		}
	}
	if len(calls) == 0 {
		return nil
	}
	if ctx.Err() != nil {
		return timeoutError()
	}
	errs := make(chan error, len(calls))
	warnings := make([][]string, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		call := func() {
			defer func() {
				if p := recover(); p != nil {
					errs <- &admission.Error{Code: 500, Reason: "InternalError", Message: fmt.Sprintf("Internal error occurred: ValidatingAdmissionWebhook/%v has panicked: %v", c.h.Name, p)}
				}
			}()
			resp, err := d.call(ctx, c.h, c.inv, a, bodies)
			if resp != nil {
				warnings[i] = resp.Warnings
				if err == nil && !resp.Allowed {
					err = denial(c.h.Name, resp.Result)
				}
			}
			if err = byPolicy(ctx, c.h, err); err != nil {
				errs <- err
			}
		}
		if len(calls) == 1 { // no goroutine for a lone webhook
			call()
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			call()
		}()
	}
	wg.Wait()
	close(errs)
	for _, ws := range warnings {
		for _, w := range ws {
			a.AddWarning(w)
		}
	}
	return <-errs // nil when the channel is empty
}

// byPolicy is the answer to a webhook's error: a failed call is ignored
// with failurePolicy Ignore and is kube's 500 with Fail; a denial (or
// any other error) is returned as it is.
func byPolicy(ctx context.Context, h *hook, err error) error {
	var ce *CallError
	if !errors.As(err, &ce) {
		return err
	}
	if *h.FailurePolicy == Ignore {
		if ctx.Err() != nil {
			return timeoutError()
		}
		return nil
	}
	return internal(ce)
}

func timeoutError() error {
	return &admission.Error{Code: http.StatusGatewayTimeout, Reason: "Timeout", Message: "request did not complete within requested timeout - context deadline exceeded"}
}

// CallError is a webhook that could not be called or answered badly
// (kube's ErrCallingWebhook): failurePolicy decides whether it fails the
// write.
type CallError struct {
	Webhook string
	Err     error
}

func (e *CallError) Error() string {
	return fmt.Sprintf("failed calling webhook %q: %v", e.Webhook, e.Err)
}

func (e *CallError) Unwrap() error { return e.Err }

// denial is kube's ToStatusErr: the webhook's status, its message
// prefixed with `admission webhook "x" denied the request`, at least a
// 400.
func denial(name string, s *Status) *admission.Error {
	if s == nil {
		s = &Status{}
	}
	by := fmt.Sprintf("admission webhook %q denied the request", name)
	msg := by + " without explanation"
	switch {
	case s.Message != "":
		msg = by + ": " + s.Message
	case s.Reason != "":
		msg = by + ": " + s.Reason
	}
	code := int(s.Code)
	if code < http.StatusBadRequest {
		code = http.StatusBadRequest
	}
	details := s.Details
	if details == nil {
		details = map[string]any{} // none: kube's denial has no details of its own
	}
	return &admission.Error{Code: code, Reason: s.Reason, Message: msg, Details: details}
}

func asAdmissionError(err error, target **admission.Error) bool { return errors.As(err, target) }
