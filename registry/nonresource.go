package registry

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/kapi-dev/kapi/registry/request"
	"github.com/kapi-dev/kapi/storage"
)

// nonResourceHandlers are the non-resource paths a program adds
// (HandleNonResource): each path, and everything under it, served after
// authentication and authorization like the registry's own.
type nonResourceHandlers struct {
	mu    sync.RWMutex
	paths map[string]http.Handler // by path, without a trailing slash
}

// HandleNonResource serves path (such as "/metrics" or "/livez") and the
// paths under it ("/livez/ping") with h, in place of the registry's own
// handler for it if it has one. The request is authenticated and
// authorized first, as a non-resource request (verb the lowercased method,
// Path the URL path), and h finds its request.Info and request.User in the
// request's context. A program adds its health checks and metrics this
// way so the authorizer decides who reads them, as kube-apiserver's does.
func (r *Registry) HandleNonResource(path string, h http.Handler) {
	path = strings.TrimSuffix(path, "/")
	r.extra.mu.Lock()
	defer r.extra.mu.Unlock()
	if r.extra.paths == nil {
		r.extra.paths = map[string]http.Handler{}
	}
	r.extra.paths[path] = h
}

// handler finds the handler of path: its own, or the nearest parent's.
func (x *nonResourceHandlers) handler(path string) (http.Handler, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if len(x.paths) == 0 {
		return nil, false
	}
	for p := strings.TrimSuffix(path, "/"); p != ""; p = p[:strings.LastIndexByte(p, '/')] {
		if h, ok := x.paths[p]; ok {
			return h, true
		}
	}
	return nil, false
}

// list returns the added paths in order, for the route table.
func (x *nonResourceHandlers) list() []string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make([]string, 0, len(x.paths))
	for p := range x.paths {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Ping tells whether the storage answers: a health check's job.
func (r *Registry) Ping(ctx context.Context) error {
	_, err := r.store.Revision(ctx)
	return err
}

// CountObjects counts the stored objects of each served resource (of its
// storage version), keyed as kube's apiserver_storage_objects labels them:
// "configmaps" for the core group, "widgets.example.com" otherwise. It
// reads one item of each resource's list and the count of the rest the
// store keeps, not every object.
func (r *Registry) CountObjects(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{}
	for _, res := range r.all() {
		if res.Review != nil {
			continue // reviews are never stored
		}
		key := res.Plural
		if res.Group != "" {
			key += "." + res.Group
		}
		if _, ok := out[key]; ok {
			continue // another version of the same resource
		}
		l, err := r.store.List(ctx, res.collectionKey(""), storage.ListOptions{Limit: 1})
		if err != nil {
			return nil, err
		}
		n := int64(len(l.Items))
		if l.Remaining != nil {
			n += *l.Remaining
		}
		out[key] = n
	}
	return out, nil
}

// Synced tells whether the registry's own informers have caught up with
// the store: with Options.RBAC, each RBAC kind's feed has applied the
// stored roles and bindings (kube's "informer-sync" readiness check).
// Without it there is nothing to wait for.
func (r *Registry) Synced(context.Context) error {
	if r.rbac == nil {
		return nil
	}
	var behind []string
	for plural, f := range r.rbac.feeds {
		f.mu.Lock()
		if f.rev == 0 {
			behind = append(behind, plural)
		}
		f.mu.Unlock()
	}
	if len(behind) > 0 {
		sort.Strings(behind)
		return fmt.Errorf("registry: the RBAC feeds of %s have not synced", strings.Join(behind, ", "))
	}
	return nil
}

// Authenticate finds who sends req, as the registry does before serving
// it (Options.Authenticator, or system:anonymous without one), without
// changing req (an authenticator removes the headers it read, from a
// copy here). A server in front of the registry calls it where kube's
// filters need the user before the registry runs: serve spares
// system:masters from its in-flight limit, as kube-apiserver does.
func (r *Registry) Authenticate(req *http.Request) (*request.User, error) {
	return r.authenticate(req.Clone(req.Context()))
}
