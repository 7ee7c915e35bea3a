package registry

import (
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kapi-dev/kapi/patch"
	"github.com/kapi-dev/kapi/registry/admission"
	"github.com/kapi-dev/kapi/registry/internal/gc"
	"github.com/kapi-dev/kapi/registry/internal/negotiate"
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
	// Now is the clock for creation and deletion timestamps (default
	// time.Now).
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
	// Admission is the admission chain every write goes through, the
	// registry's own included (pipeline.go): mutating hooks before the
	// strategy, validating hooks before storage. The zero chain admits
	// everything, at no cost.
	Admission admission.Chain
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
// for concurrent use; register every resource before serving.
type Registry struct {
	opts  Options
	store storage.Interface
	log   *slog.Logger

	mu        sync.RWMutex
	resources map[string]*Resource            // by group/version/plural
	groups    map[string]map[string]*groupVer // group → version → resources
	ns        *Resource                       // the built-in namespaces

	// encodes counts object encodings and frames watch-event framings,
	// per format (serialize-once tests).
	encodes, frames [negotiate.NumFormats]atomic.Int64

	openAPIV2Cache openAPIV2Cache // /openapi/v2, built once per registry state
	gc             *gc.Collector  // the garbage collector; nil when disabled

	clientTypes typeIDs // the Go types of Clients, for their shared watch objects' memo keys
}

type groupVer struct {
	group, version string
	resources      []*Resource
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
		resources: map[string]*Resource{},
		groups:    map[string]map[string]*groupVer{},
	}
	r.ns = namespaceResource(r)
	if err := r.Register(r.ns); err != nil {
		return nil, err
	}
	if err := r.ensureDefaultNamespace(); err != nil {
		return nil, err
	}
	if !opts.DisableGarbageCollection {
		r.gc = r.startGC()
	}
	return r, nil
}

// Register adds a resource. It fails if the definition is incomplete or the
// group/version/plural is taken.
func (r *Registry) Register(res *Resource) error {
	if err := res.validate(); err != nil {
		return err
	}
	res.merge = mergeSchema(res.Schema)
	fm, err := patch.NewFieldManager(res.merge, res.GroupVersion(), patch.FieldManagerOptions{Kind: res.Kind, ResetFields: res.resetFields()})
	if err != nil {
		return fmt.Errorf("registry: resource %s: %w", res.Plural, err)
	}
	res.manager = fm
	res.defaults = hasDefaults(res.Schema)
	if paths := res.Schema.RulePaths(); len(paths) > 0 {
		if r.opts.CEL == nil {
			return fmt.Errorf("registry: resource %s: the schema has x-kubernetes-validations rules (at %s) and Options.CEL is nil: set it to cel.Compile from github.com/kapi-dev/kapi/cel to evaluate them", res.qualified(), strings.Join(paths, ", "))
		}
		rules, err := r.opts.CEL(res.Schema)
		if err != nil {
			return fmt.Errorf("registry: resource %s: %w", res.qualified(), err)
		}
		res.rules = rules
	}
	id := res.Group + "/" + res.Version + "/" + res.Plural
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.resources[id]; ok {
		return fmt.Errorf("registry: resource %s registered twice", id)
	}
	r.resources[id] = res
	vs := r.groups[res.Group]
	if vs == nil {
		vs = map[string]*groupVer{}
		r.groups[res.Group] = vs
	}
	gv := vs[res.Version]
	if gv == nil {
		gv = &groupVer{group: res.Group, version: res.Version}
		vs[res.Version] = gv
	}
	gv.resources = append(gv.resources, res)
	sort.Slice(gv.resources, func(i, j int) bool { return gv.resources[i].Plural < gv.resources[j].Plural })
	return nil
}

func (r *Registry) resource(group, version, plural string) *Resource {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.resources[group+"/"+version+"/"+plural]
}

// all returns every registered resource.
func (r *Registry) all() []*Resource {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*Resource, 0, len(r.resources))
	for _, res := range r.resources {
		out = append(out, res)
	}
	return out
}

// ServeHTTP serves the API. Mount it under any prefix with http.StripPrefix.
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
	path := strings.TrimSuffix(req.URL.Path, "/")
	switch path {
	case "/healthz", "/livez", "/readyz":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok"))
		return
	case "/version":
		r.writeJSON(w, req, http.StatusOK, r.opts.Version)
		return
	case "/api", "/apis":
		r.serveRootDiscovery(w, req, path == "/api")
		return
	}
	if path == "/openapi/v2" {
		r.serveOpenAPIV2(w, req)
		return
	}
	if path == "/openapi/v3" || strings.HasPrefix(path, "/openapi/v3/") {
		r.serveOpenAPI(w, req, path)
		return
	}
	var group, version string
	var rest []string
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	switch {
	case parts[0] == "api" && len(parts) >= 2:
		version, rest = parts[1], parts[2:]
	case parts[0] == "apis" && len(parts) == 2:
		r.serveGroup(w, req, parts[1])
		return
	case parts[0] == "apis" && len(parts) >= 3:
		group, version, rest = parts[1], parts[2], parts[3:]
	default:
		writeStatus(w, req, errPathNotFound())
		return
	}
	r.mu.RLock()
	gv := r.groups[group][version]
	r.mu.RUnlock()
	if gv == nil {
		writeStatus(w, req, errPathNotFound())
		return
	}
	if len(rest) == 0 {
		r.serveResourceList(w, req, gv)
		return
	}
	rq, err := r.route(req, group, version, rest)
	if err != nil {
		writeStatus(w, req, err)
		return
	}
	r.serve(w, rq)
}

// request is one routed API request.
type request struct {
	*http.Request
	res         *Resource
	namespace   string
	name        string
	subresource string
	watch       bool // legacy /watch/ prefix or ?watch=true
}

// route parses what follows /api/v1 or /apis/G/V, following
// kube-apiserver's request-info rules:
//
//	[watch/] [namespaces/NS/] RESOURCE [/NAME [/SUBRESOURCE]]
//
// where namespaces/NAME/status and namespaces/NAME/finalize address the
// namespace itself.
func (r *Registry) route(req *http.Request, group, version string, parts []string) (*request, *StatusError) {
	rq := &request{Request: req}
	if parts[0] == "watch" {
		rq.watch = true
		parts = parts[1:]
	}
	if len(parts) >= 3 && parts[0] == "namespaces" && parts[2] != "status" && parts[2] != "finalize" {
		rq.namespace = parts[1]
		parts = parts[2:]
	}
	if len(parts) == 0 || len(parts) > 3 {
		return nil, errPathNotFound()
	}
	res := r.resource(group, version, parts[0])
	if res == nil {
		return nil, errPathNotFound()
	}
	rq.res = res
	if rq.namespace != "" && !res.Namespaced {
		return nil, errPathNotFound()
	}
	if len(parts) > 1 {
		rq.name = parts[1]
		if rq.name == "" {
			return nil, errPathNotFound()
		}
	}
	if len(parts) > 2 {
		rq.subresource = parts[2]
		if !res.hasSubresource(rq.subresource) {
			return nil, errPathNotFound()
		}
	}
	if res.Namespaced && rq.name != "" && rq.namespace == "" {
		return nil, errPathNotFound()
	}
	q := req.URL.Query()
	if v := q.Get("watch"); v == "true" || v == "1" {
		rq.watch = true
	}
	return rq, nil
}

func (res *Resource) hasSubresource(s string) bool {
	switch s {
	case "status":
		return res.Status
	case "scale":
		return res.Scale != nil
	}
	_, ok := res.Subresources[s]
	return ok
}

// serve dispatches a routed request to its verb.
func (r *Registry) serve(w http.ResponseWriter, rq *request) {
	rq.Request = rq.WithContext(withWarnings(rq.Context(), w.Header()))
	var err error
	switch m := rq.Method; {
	case rq.watch:
		if m != http.MethodGet {
			err = errMethodNotAllowed(m)
			break
		}
		err = r.serveWatch(w, rq)
	case rq.subresource != "" && rq.subresource != "status":
		err = r.serveSubresource(w, rq)
	case rq.name == "":
		switch m {
		case http.MethodGet:
			err = r.serveList(w, rq)
		case http.MethodPost:
			err = r.serveCreate(w, rq)
		case http.MethodDelete:
			err = r.serveDeleteCollection(w, rq)
		default:
			err = errMethodNotAllowed(m)
		}
	default:
		switch m {
		case http.MethodGet:
			err = r.serveGet(w, rq)
		case http.MethodPut:
			err = r.serveUpdate(w, rq)
		case http.MethodPatch:
			err = r.servePatch(w, rq)
		case http.MethodDelete:
			if rq.subresource != "" {
				err = errMethodNotAllowed(m)
				break
			}
			err = r.serveDelete(w, rq)
		default:
			err = errMethodNotAllowed(m)
		}
	}
	if err != nil {
		writeStatus(w, rq.Request, toStatus(err, rq.res, rq.name))
	}
}
