package registry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kapi-dev/kapi/patch"
	"github.com/kapi-dev/kapi/registry/admission"
	"github.com/kapi-dev/kapi/registry/admission/webhook"
	"github.com/kapi-dev/kapi/registry/authn"
	"github.com/kapi-dev/kapi/registry/authz"
	"github.com/kapi-dev/kapi/registry/authz/rbac"
	"github.com/kapi-dev/kapi/registry/internal/gc"
	"github.com/kapi-dev/kapi/registry/internal/negotiate"
	"github.com/kapi-dev/kapi/registry/request"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/storage"
)

// Options configure a Registry.
type Options struct {
	// Storage holds every object; required.
	Storage storage.Interface
	// MaxBodyBytes bounds request bodies (default 3 MiB); larger is 413.
	MaxBodyBytes int64
	// Logger receives structured logs; nil logs nothing.
	Logger *slog.Logger
	// Version is what /version reports.
	Version Version
	// MinWatchTimeout is the lower end of the randomised default watch
	// timeout, which lies in [MinWatchTimeout, 2*MinWatchTimeout)
	// (default 30 minutes, as kube-apiserver).
	MinWatchTimeout time.Duration
	// BookmarkBeforeDeadline is how long before a watch's deadline a
	// bookmark is sent to watchers that allow bookmarks (default 2s).
	BookmarkBeforeDeadline time.Duration
	// Now is the clock for creation and deletion timestamps, managedFields
	// times, and what strategies stamp a status with (they read it with
	// Now(ctx)); default time.Now.
	Now func() time.Time
	// CEL compiles the x-kubernetes-validations rules of resource schemas;
	// set it to cel.Compile from the module github.com/kapi-dev/kapi/cel.
	// Without it, Register refuses a schema that has rules rather than
	// ignore them.
	CEL schema.Compiler
	// DisableGarbageCollection turns off the built-in garbage collector of
	// ownerReferences (gc.go), and with it the orphan and
	// foregroundDeletion finalizers a delete would add.
	DisableGarbageCollection bool
	// DisableCustomResourceDefinitions stops serving
	// apiextensions.k8s.io/v1 CustomResourceDefinitions (apiextensions.go),
	// which are served by default, their kinds with them.
	DisableCustomResourceDefinitions bool

	// Authenticator finds who sends each request; a request it does not
	// accept answers 401. Nil serves every request as system:anonymous
	// (group system:unauthenticated): with the default Authorizer, that
	// lets anyone who can reach the handler do anything, which is only
	// right on a loopback listener or behind a proxy that authenticates.
	Authenticator authn.Authenticator
	// APIAudiences are the audiences the server's tokens are good for
	// (kube-apiserver's --api-audiences, its --service-account-issuer by
	// default). A TokenReview that names no audience reports them; one
	// that names audiences reports those among them, and fails when there
	// are none. Nil: the server has none, and a review naming any fails.
	APIAudiences []string
	// Authorizer decides each request (every route asks it, with the
	// request's authz.Attributes); what it does not allow answers 403.
	// Nil allows everything (authz.AlwaysAllow).
	Authorizer authz.Authorizer
	// Admission is the admission chain every write goes through, the
	// registry's own included (pipeline.go): mutating hooks before the
	// strategy, validating hooks before storage. The zero chain admits
	// everything, at no cost.
	Admission admission.Chain
	// RBAC, when set, is fed every stored Role, ClusterRole, RoleBinding
	// and ClusterRoleBinding (rbac.go): put it in Authorizer too, usually
	// as authz.Union(authz.Privileged(request.SystemPrivileged), RBAC).
	// The registry then also checks role and binding writes as kube does
	// (escalate, bind), keeps aggregated ClusterRoles, and creates kube's
	// default roles and bindings. The RBAC kinds are served either way.
	RBAC *rbac.Authorizer
	// ResolveWebhookService gives the URL of the service a webhook
	// configuration's clientConfig.service names (webhooks.go); nil:
	// calls to such webhooks fail, by their failurePolicy. Webhooks
	// with a clientConfig.url need none. It also resolves CRDs'
	// conversion webhooks given as a service (conversion_webhook.go);
	// for those, nil is kube's default, https://NAME.NAMESPACE.svc:PORT/PATH.
	ResolveWebhookService func(ctx context.Context, ref webhook.ServiceReference) (*url.URL, error)
	// Definitions, when set, are kube's OpenAPI definitions by name
	// (builtin.Definitions): the kinds the registry serves itself
	// (namespaces, RBAC, the reviews, webhook configurations) publish
	// kube's definition of their kind in the OpenAPI v3 documents
	// (Resource.OpenAPI), so that kubectl explain prints kube's text.
	Definitions func() map[string]map[string]any
	// WebhookConditions compiles webhooks' matchConditions; set it to
	// cel.CompileMatchConditions from github.com/kapi-dev/kapi/cel. Without
	// it, a webhook configuration with matchConditions is refused (422)
	// rather than its conditions ignored.
	WebhookConditions webhook.ConditionCompiler
	// Metrics receives what only the registry can measure: the watch
	// events it sends. Nil measures nothing. The module
	// github.com/kapi-dev/kapi/metrics implements it with Prometheus.
	Metrics Metrics
}

// Metrics receives the registry's measurements. Its methods are called
// from the goroutines serving requests, concurrently, and must not block.
type Metrics interface {
	// WatchEvents counts events sent on one watch of the resource
	// group/version/resource (plural), and the bytes of their frames.
	WatchEvents(group, version, resource string, events, bytes int)
}

// Version is the /version document.
type Version struct {
	Major      string `json:"major"`
	Minor      string `json:"minor"`
	GitVersion string `json:"gitVersion"`
	GitCommit  string `json:"gitCommit"`
	Platform   string `json:"platform"`
}

// Registry serves registered resources over HTTP and in-process. It is safe
// for concurrent use, and its resources may be registered, replaced and
// unregistered while it serves (restable.go: a copy-on-write table read
// without locks).
type Registry struct {
	opts       Options
	store      storage.Interface
	log        *slog.Logger
	authorizer authz.Authorizer // Options.Authorizer or AlwaysAllow
	rbac       *rbacFeeds       // feeds Options.RBAC; nil without it
	crds       *crdFeed         // serves the CRDs' kinds; nil when disabled
	webhooks   *webhook.Dispatcher
	hookFeeds  *rbacFeeds // feed webhooks from the stored configurations

	tableMu sync.Mutex               // serialises changes of tab
	tab     atomic.Pointer[resTable] // the served resources; never nil after New
	ns      *Resource                // the built-in namespaces

	// encodes counts object encodings and frames watch-event framings,
	// per format (serialize-once tests).
	encodes, frames [negotiate.NumFormats]atomic.Int64

	gc *gc.Collector // the garbage collector; nil when disabled

	clientTypes typeIDs // the Go types of Clients, for their shared watch objects' memo keys

	extra nonResourceHandlers // HandleNonResource's paths
}

// New returns a Registry with the built-in namespaces resource registered
// and the "default" namespace created.
func New(opts Options) (*Registry, error) {
	if opts.Storage == nil {
		return nil, fmt.Errorf("registry: Options.Storage is required")
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 3 << 20
	}
	if opts.MinWatchTimeout <= 0 {
		opts.MinWatchTimeout = 30 * time.Minute
	}
	if opts.BookmarkBeforeDeadline <= 0 {
		opts.BookmarkBeforeDeadline = 2 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Version.GitVersion == "" {
		opts.Version = Version{Major: "1", Minor: "37", GitVersion: "v1.37.0-kapi", Platform: "linux/amd64"}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Registry{
		opts: opts, store: opts.Storage, log: log,
		authorizer: opts.Authorizer,
	}
	r.tab.Store(&resTable{seq: tableSeq.Add(1), resources: map[string]*Resource{}, groups: map[string]map[string]*groupVer{}})
	if r.authorizer == nil {
		r.authorizer = authz.AlwaysAllow
	}
	r.ns = namespaceResource(r)
	r.webhooks = r.newWebhooks()
	rbacResources, hookResources := r.rbacResources(), r.webhookResources()
	for _, res := range slices.Concat([]*Resource{r.ns}, r.reviewResources(), rbacResources, hookResources) {
		if opts.Definitions != nil {
			res.OpenAPI = &OpenAPIDefinitions{Name: kubeDefinition(res), Schemas: opts.Definitions}
		}
		if err := r.Register(res); err != nil {
			return nil, err
		}
	}
	r.hookFeeds, _ = r.startFeeds(hookResources, webhookSink{r.webhooks}, nil)
	if opts.RBAC != nil {
		if err := r.startRBAC(rbacResources); err != nil {
			r.stopRBAC()
			return nil, err
		}
	}
	if err := r.ensureDefaultNamespace(); err != nil {
		r.stopRBAC()
		return nil, err
	}
	if !opts.DisableCustomResourceDefinitions {
		crds := r.crdResource()
		if err := r.Register(crds); err != nil {
			return nil, err
		}
		r.startCRDs(crds)
	}
	if !opts.DisableGarbageCollection {
		r.gc = r.startGC()
	}
	return r, nil
}

// Register adds resources, all or none: it fails if a definition is
// incomplete or a group/version/plural is taken. It may be called while
// the registry serves: the next request sees them, and discovery and
// OpenAPI describe them.
func (r *Registry) Register(res ...*Resource) error {
	for _, x := range res {
		if err := r.prepare(x); err != nil {
			return err
		}
	}
	return r.change(tableChange{add: res})
}

// Replace serves each of res in place of the resource registered at its
// group/version/plural, all or none: it fails if one is not registered.
// Requests already routed finish with the old definition; open watches
// of the old one end (clients watch again, and get the new one), as
// kube's do when a CustomResourceDefinition changes.
func (r *Registry) Replace(res ...*Resource) error {
	c := tableChange{add: res}
	for _, x := range res {
		if err := r.prepare(x); err != nil {
			return err
		}
		c.remove = append(c.remove, tableID(x.Group, x.Version, x.Plural))
	}
	return r.change(c)
}

// Unregister stops serving the resource at group, version and plural
// (group "" is the core group): its routes answer 404 from the next
// request, discovery and OpenAPI no longer describe it, and its open
// watches end. Stored objects stay where they are.
func (r *Registry) Unregister(group, version, plural string) error {
	return r.change(tableChange{remove: []string{tableID(group, version, plural)}})
}

// prepare checks res and compiles what serving it needs.
func (r *Registry) prepare(res *Resource) error {
	if res.retired != nil {
		return fmt.Errorf("registry: resource %s: a *Resource is registered once; register a new one", res.qualified())
	}
	if err := res.validate(); err != nil {
		return err
	}
	res.merge = mergeSchema(res.Schema)
	r.prepareConversion(res)
	fm, err := patch.NewFieldManager(res.merge, res.GroupVersion(), patch.FieldManagerOptions{Kind: res.Kind, ResetFields: res.resetFields(),
		// A built-in kind's creates start from its Go type's zero value.
		Typed: !res.Custom && res.Schema != nil, Zero: res.TypedZero})
	if err != nil {
		return fmt.Errorf("registry: resource %s: %w", res.Plural, err)
	}
	res.manager = fm
	facts := factsOf(res.Schema)
	res.defaults = facts.defaults
	if paths := facts.rulePaths; len(paths) > 0 {
		if r.opts.CEL == nil {
			return fmt.Errorf("registry: resource %s: the schema has x-kubernetes-validations rules (at %s) and Options.CEL is nil: set it to cel.Compile from github.com/kapi-dev/kapi/cel to evaluate them", res.qualified(), strings.Join(paths, ", "))
		}
		rules, err := r.opts.CEL(res.Schema)
		if err != nil {
			return fmt.Errorf("registry: resource %s: %w", res.qualified(), err)
		}
		res.rules = rules
	}
	return nil
}

// prepareConversion numbers a converting resource's converted states and
// lets it find its other versions; the part of prepare that depends on
// StorageVersion alone (the CRD feed sets it on resources a CRD's
// validation prepared).
func (r *Registry) prepareConversion(res *Resource) {
	if res.converts() {
		res.convertID = convertIDs.Add(1)
		group, plural, unserved := res.Group, res.Plural, res.unserved
		res.version = func(v string) *Resource {
			if x := r.resource(group, v, plural); x != nil {
				return x
			}
			x, _ := unserved.resource(v) // a CRD's version listed but not served
			return x
		}
	}
}

func (r *Registry) resource(group, version, plural string) *Resource {
	return r.tab.Load().resource(group, version, plural)
}

// all returns every registered resource.
func (r *Registry) all() []*Resource {
	return slices.Collect(maps.Values(r.tab.Load().resources))
}

// ServeHTTP serves the API. Mount it under any prefix with http.StripPrefix.
//
// Every request takes one path: route (request.Parse: its Info) →
// authenticate (its User) → impersonate → authorize → the handler the
// route table names (routes.go), which decodes, writes through the write
// path and encodes. Info and User are in the request's context from the
// authorization on (request.InfoFrom, request.UserFrom).
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			r.log.Error("panic serving request", "method", req.Method, "path", req.URL.Path, "panic", p)
			writeStatus(w, req, errInternal(fmt.Errorf("panic: %v", p)))
		}
	}()
	info, err := request.Parse(req.Method, req.URL)
	if err != nil {
		writeStatus(w, req, errPathNotFound())
		return
	}
	user, err := r.authenticate(req)
	if err == nil {
		user, err = r.impersonate(req.Context(), req, info, user)
	}
	rec := request.RecordFrom(req.Context())
	if err == nil {
		rec.SetUser(user)
	}
	if err == nil {
		err = r.authorize(req.Context(), authz.AttributesFrom(user, info))
	}
	if err != nil {
		rec.Fail(err)
		writeStatus(w, req, toStatus(err, nil, ""))
		return
	}
	ctx := request.WithUser(request.WithInfo(req.Context(), info), user)
	if !info.IsResourceRequest {
		if h, ok := r.extra.handler(req.URL.Path); ok {
			h.ServeHTTP(w, req.WithContext(ctx))
			return
		}
		h, ok := r.nonResourceHandler(req.URL.Path)
		if !ok {
			writeStatus(w, req, errPathNotFound())
			return
		}
		h(w, req.WithContext(ctx))
		return
	}
	rq, h, err := r.route(req.Method, info)
	if err != nil {
		rec.Fail(err)
		r.writeNotServed(w, req, info, toStatus(err, nil, ""))
		return
	}
	rq.Request = req.WithContext(withWarnings(ctx, w.Header(), r.opts.Now))
	for _, msg := range rq.res.Warnings {
		Warn(rq.Context(), msg)
	}
	if err := h(r, w, rq); err != nil {
		rec.Fail(err)
		r.writeNotServed(w, rq.Request, info, toStatus(err, rq.res, rq.name))
	}
}

// writeNotServed writes se, unless it is the 404 of a path nothing
// serves (errPathNotFound) under a group that no built-in kind serves:
// there kube-apiserver's CRD handler, finding no custom resource of the
// path's group, version, plural and scope, hands the request on to its
// mux, which answers Go's text/plain "404 page not found". Under the
// core group or a built-in kind's group, kube answers a NotFound Status:
//
//	GET /apis/example.com/v1/namespaces/a/globals  (a cluster-scoped CRD)  → 404 page not found
//	GET /api/v1/namespaces/a/nopes                                         → 404 Status
func (r *Registry) writeNotServed(w http.ResponseWriter, req *http.Request, info *request.Info, se *StatusError) {
	if errors.Is(se, errNoPath) && info.APIPrefix == "apis" && !r.builtinGroup(info.APIGroup) {
		http.NotFound(w, req)
		return
	}
	writeStatus(w, req, se)
}

// builtinGroup reports whether a kind not served by custom resources
// (a built-in kind) is in group.
func (r *Registry) builtinGroup(group string) bool {
	for _, res := range r.all() {
		if res.Group == group && !res.Custom {
			return true
		}
	}
	return false
}

// routed is one routed API request.
type routed struct {
	*http.Request
	res         *Resource
	namespace   string
	name        string
	subresource string
}

// addressesNamespace tells namespaces/NAME[/SUB] (the namespace itself,
// whose name request.Parse also gives as the namespace) from
// namespaces/NS/RESOURCE…: in the first the namespace's segments are still
// in Parts.
func addressesNamespace(info *request.Info) bool {
	segs := strings.Split(strings.Trim(info.Path, "/"), "/")
	base := 2 // api/V
	if info.APIPrefix == "apis" {
		base = 3 // apis/G/V
	}
	if len(segs) > base && segs[base] == "watch" {
		base++
	}
	return info.Namespace != "" && len(segs)-base == len(info.Parts)
}

// route finds the resource and the handler of a resource request: 404
// when the resource or subresource is not served, 405 when the endpoint
// has no handler for the verb.
func (r *Registry) route(method string, info *request.Info) (*routed, verbHandler, error) {
	if len(info.Parts) > 3 || info.Resource == "" || slices.Contains(info.Parts, "") {
		return nil, nil, errPathNotFound()
	}
	res := r.resource(info.APIGroup, info.APIVersion, info.Resource)
	if res == nil {
		return nil, nil, errPathNotFound()
	}
	rq := &routed{res: res, namespace: info.Namespace, name: info.Name, subresource: info.Subresource}
	if len(info.Parts) == 1 {
		rq.name = "" // a collection: a name from a field selector only filters
	}
	if addressesNamespace(info) {
		// namespaces/NAME[/status|/finalize]: the Info's namespace is
		// the object itself, as kube's request info has it.
		rq.namespace = ""
	}
	if rq.namespace != "" && !res.Namespaced {
		return nil, nil, errPathNotFound()
	}
	if res.Namespaced && rq.name != "" && rq.namespace == "" {
		return nil, nil, errPathNotFound()
	}
	ep, ok := endpointOf(res, rq.name, rq.subresource)
	switch {
	case !ok && res.Custom && rq.name != "" && rq.subresource != "":
		// kube's custom resource handler answers a subresource the CRD
		// does not define with the object's NotFound, whatever the verb.
		return nil, nil, errNotFound(res, rq.name)
	case !ok:
		return nil, nil, errPathNotFound()
	}
	h := resourceRoutes[ep][info.Verb]
	if h == nil {
		return nil, nil, errMethodNotAllowed(method)
	}
	return rq, h, nil
}
