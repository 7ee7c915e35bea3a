package registry

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/kapi-dev/kapi/registry/authz/rbac"
	"github.com/kapi-dev/kapi/registry/request"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// The RBAC feed: one watch per RBAC resource sets each stored role and
// binding in Options.RBAC as it changes. A write of one waits (rbacSyncTimeout
// at most) until its feed has seen it, so that the next request is
// decided by what was written:
//
//	POST rolebindings a/read (stored at revision 42)
//	  → AfterWrite waits until the rolebindings feed has applied revision 42
//	  → 201; alice's next list of pods in a is decided with a/read
//
// A watch that ends (a backend restart, a watcher that fell behind) is
// started again with its initial state, and whatever it no longer lists
// is deleted from the authorizer.

// rbacSyncTimeout bounds how long a write waits for its feed (a healthy
// feed takes milliseconds; a stalled one is logged).
const rbacSyncTimeout = 5 * time.Second

// rbacFeed is the state of one resource's feed.
type rbacFeed struct {
	res *Resource

	mu      sync.Mutex
	rev     uint64              // the last revision applied
	keys    map[string]struct{} // the keys set in the authorizer
	changed chan struct{}       // closed (and replaced) when rev or keys change
}

// rbacFeeds are the feeds by resource plural, and what stops them.
type rbacFeeds struct {
	feeds     map[string]*rbacFeed
	aggregate chan struct{} // a ClusterRole changed: run the aggregation controller
	stop      context.CancelFunc
	done      sync.WaitGroup
}

// startRBAC creates kube's default roles and bindings, then feeds
// Options.RBAC from storage and runs the aggregation controller, until
// Close.
func (r *Registry) startRBAC(resources []*Resource) error {
	ctx, stop := context.WithCancel(context.Background())
	fs := &rbacFeeds{feeds: map[string]*rbacFeed{}, aggregate: make(chan struct{}, 1), stop: stop}
	r.rbac = fs
	for _, res := range resources {
		f := &rbacFeed{res: res, keys: map[string]struct{}{}, changed: make(chan struct{})}
		fs.feeds[res.Plural] = f
		fs.done.Add(1)
		go func() {
			defer fs.done.Done()
			r.feed(ctx, f)
		}()
	}
	fs.done.Add(1)
	go func() {
		defer fs.done.Done()
		r.aggregateClusterRoles(ctx)
	}()
	return r.createRBACDefaults()
}

// stopRBAC stops the feeds and waits for them.
func (r *Registry) stopRBAC() {
	if r.rbac != nil {
		r.rbac.stop()
		r.rbac.done.Wait()
	}
}

// feed follows f's resource into the authorizer, watching again when a
// watch ends.
func (r *Registry) feed(ctx context.Context, f *rbacFeed) {
	for ctx.Err() == nil {
		w, err := r.store.Watch(ctx, f.res.keyPrefix(), storage.WatchOptions{Recursive: true, Initial: true, InitialEnd: true})
		if err != nil {
			r.log.Warn("RBAC cannot watch the store; retrying", "resource", f.res.Plural, "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		r.follow(ctx, f, w)
		w.Stop()
	}
}

func (r *Registry) follow(ctx context.Context, f *rbacFeed, w watch.Interface) {
	seen := map[string]struct{}{} // the initial state's keys, until its end
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type == watch.Error {
				return
			}
			r.applyEvent(f, ev, seen)
			if ev.InitialEventsEnd {
				seen = nil
			}
		}
	}
}

// applyEvent applies one event to the authorizer and to f's state.
func (r *Registry) applyEvent(f *rbacFeed, ev watch.Event, initial map[string]struct{}) {
	z := r.opts.RBAC
	f.mu.Lock()
	defer f.mu.Unlock()
	switch ev.Type {
	case watch.Added, watch.Modified:
		o, _ := ev.Object.(storage.Object)
		if err := z.SetJSON(f.res.Kind, o.Value); err != nil {
			r.log.Warn("RBAC ignores a stored object it cannot read", "key", o.Key, "err", err)
			break
		}
		f.keys[o.Key] = struct{}{}
		if initial != nil {
			initial[o.Key] = struct{}{}
		}
	case watch.Deleted:
		o, _ := ev.Object.(storage.Object)
		r.unset(f, o.Key)
	case watch.Bookmark:
		if ev.InitialEventsEnd && initial != nil {
			for k := range f.keys {
				if _, ok := initial[k]; !ok {
					r.unset(f, k) // gone while no watch ran
				}
			}
		}
	}
	f.rev = max(f.rev, ev.Revision)
	close(f.changed)
	f.changed = make(chan struct{})
	if f.res.Kind == "ClusterRole" {
		select {
		case r.rbac.aggregate <- struct{}{}:
		default:
		}
	}
}

// unset removes the object at key from the authorizer; f.mu is held.
func (r *Registry) unset(f *rbacFeed, key string) {
	ns, name := f.res.splitKey(key)
	if err := r.opts.RBAC.Delete(f.res.Kind, ns, name); err != nil {
		r.log.Warn("RBAC cannot delete", "key", key, "err", err)
	}
	delete(f.keys, key)
}

// rbacSeen is res's AfterWrite: it waits until the feed has applied the
// write.
func (r *Registry) rbacSeen(res *Resource) func(ctx context.Context, obj Object, rev uint64) {
	return func(ctx context.Context, _ Object, rev uint64) {
		r.waitFeed(ctx, res, func(f *rbacFeed) bool { return f.rev >= rev })
	}
}

// rbacGone is res's AfterDelete: it waits until the feed has removed a
// deleted object.
func (r *Registry) rbacGone(res *Resource) func(ctx context.Context, obj Object, gone bool) {
	return func(ctx context.Context, obj Object, gone bool) {
		if !gone {
			return
		}
		key := res.objectKey(obj.Namespace(), obj.Name())
		r.waitFeed(ctx, res, func(f *rbacFeed) bool { _, ok := f.keys[key]; return !ok })
	}
}

// waitFeed waits until done holds of res's feed, rbacSyncTimeout at most.
func (r *Registry) waitFeed(ctx context.Context, res *Resource, done func(*rbacFeed) bool) {
	if r.rbac == nil {
		return
	}
	f := r.rbac.feeds[res.Plural]
	timeout := time.NewTimer(rbacSyncTimeout)
	defer timeout.Stop()
	for {
		f.mu.Lock()
		ok, changed := done(f), f.changed
		f.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		case <-timeout.C:
			r.log.Warn("RBAC feed is late", "resource", res.Plural)
			return
		}
	}
}

// aggregationUser writes aggregated ClusterRoles, as kube's
// clusterrole-aggregation-controller (which may escalate).
var aggregationUser = &request.User{Name: "system:serviceaccount:kube-system:clusterrole-aggregation-controller",
	Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", request.AllAuthenticated}}

// aggregateClusterRoles is kube's aggregation controller: when a
// ClusterRole changes, the rules of the ClusterRoles with an
// aggregationRule are recomputed and written where they differ.
func (r *Registry) aggregateClusterRoles(ctx context.Context) {
	res := r.rbac.feeds["clusterroles"].res
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.rbac.aggregate:
		}
		for _, cr := range rbac.Reaggregate(r.opts.RBAC.ClusterRoles()) {
			rules := []any{}
			if err := convert(cr.Rules, &rules); err != nil {
				continue
			}
			err := r.edit(ctx, res, "", cr.Metadata.Name, aggregationUser, func(obj map[string]any) bool {
				obj["rules"] = rules
				return true
			})
			if err != nil && ctx.Err() == nil {
				r.log.Warn("cannot aggregate a ClusterRole", "name", cr.Metadata.Name, "err", err)
			}
		}
	}
}

// createRBACDefaults creates kube's default ClusterRoles and
// ClusterRoleBindings that do not exist yet (rbac.Bootstrap), as
// system:apiserver.
func (r *Registry) createRBACDefaults() error {
	ctx := request.WithUser(context.Background(), apiserverUser)
	roles, bindings := rbac.Bootstrap()
	var objs []any
	for _, cr := range roles {
		objs = append(objs, cr)
	}
	for _, b := range bindings {
		objs = append(objs, b)
	}
	for _, o := range objs {
		var obj Object
		if err := convert(o, &obj); err != nil {
			return err
		}
		res := r.rbac.feeds["clusterroles"].res
		if obj["kind"] == "ClusterRoleBinding" {
			res = r.rbac.feeds["clusterrolebindings"].res
		}
		if _, err := r.create(ctx, res, "", obj, writeOptions{manager: "kube-apiserver"}); err != nil && !storage.IsExists(err) {
			return err
		}
	}
	return nil
}

// splitKey is the namespace and name of the object at key.
func (res *Resource) splitKey(key string) (ns, name string) {
	rest := strings.TrimPrefix(key, res.keyPrefix())
	if res.Namespaced {
		ns, name, _ = strings.Cut(rest, "/")
		return ns, name
	}
	return "", rest
}
