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

// feedSink is what a feed keeps in step with storage: Options.RBAC, the
// webhook dispatcher (webhooks.go).
type feedSink interface {
	SetJSON(kind string, value []byte) error
	Delete(kind, namespace, name string) error
}

// rbacFeed is the state of one resource's feed.
type rbacFeed struct {
	res      *Resource
	sink     feedSink
	onChange func() // after each event; nil: nothing

	mu      sync.Mutex
	rev     uint64              // the last revision applied
	keys    map[string]struct{} // the keys set in the authorizer
	changed chan struct{}       // closed (and replaced) when rev or keys change
	synced  chan struct{}       // closed once the first initial state is applied
	once    sync.Once
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
	aggregate := make(chan struct{}, 1)
	fs, ctx := r.startFeeds(resources, r.opts.RBAC, func(f *rbacFeed) {
		if f.res.Kind == "ClusterRole" {
			f.onChange = func() {
				select {
				case aggregate <- struct{}{}:
				default:
				}
			}
		}
	})
	fs.aggregate = aggregate
	r.rbac = fs
	fs.done.Add(1)
	go func() {
		defer fs.done.Done()
		r.aggregateClusterRoles(ctx)
	}()
	return r.createRBACDefaults()
}

// startFeeds starts a feed of sink per resource, each set up by setup
// (may be nil) before it starts; they run until the feeds' stop.
func (r *Registry) startFeeds(resources []*Resource, sink feedSink, setup func(*rbacFeed)) (*rbacFeeds, context.Context) {
	ctx, stop := context.WithCancel(context.Background())
	fs := &rbacFeeds{feeds: map[string]*rbacFeed{}, stop: stop}
	for _, res := range resources {
		f := &rbacFeed{res: res, sink: sink, keys: map[string]struct{}{}, changed: make(chan struct{}), synced: make(chan struct{})}
		if setup != nil {
			setup(f)
		}
		fs.feeds[res.Plural] = f
		fs.done.Add(1)
		go func() {
			defer fs.done.Done()
			r.feed(ctx, f)
		}()
	}
	// The stored state is in the sink before the registry serves (a
	// durable store's configurations are effective for the first
	// request), rbacSyncTimeout at most.
	timeout := time.NewTimer(rbacSyncTimeout)
	defer timeout.Stop()
	for _, f := range fs.feeds {
		select {
		case <-f.synced:
		case <-timeout.C:
			r.log.Warn("a feed is late", "resource", f.res.Plural)
		}
	}
	return fs, ctx
}

// stopRBAC stops the feeds (RBAC's and the webhooks') and waits for them.
func (r *Registry) stopRBAC() {
	for _, fs := range []*rbacFeeds{r.rbac, r.hookFeeds} {
		if fs != nil {
			fs.stop()
			fs.done.Wait()
		}
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
				f.once.Do(func() { close(f.synced) })
			}
		}
	}
}

// applyEvent applies one event to the authorizer and to f's state.
func (r *Registry) applyEvent(f *rbacFeed, ev watch.Event, initial map[string]struct{}) {
	z := f.sink
	f.mu.Lock()
	defer f.mu.Unlock()
	switch ev.Type {
	case watch.Added, watch.Modified:
		o, _ := ev.Object.(storage.Object)
		if err := z.SetJSON(f.res.Kind, o.Value); err != nil {
			r.log.Warn("a feed ignores a stored object it cannot use", "key", o.Key, "err", err)
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
	if f.onChange != nil {
		f.onChange()
	}
}

// unset removes the object at key from the authorizer; f.mu is held.
func (r *Registry) unset(f *rbacFeed, key string) {
	ns, name := f.res.splitKey(key)
	if err := f.sink.Delete(f.res.Kind, ns, name); err != nil {
		r.log.Warn("a feed cannot delete", "key", key, "err", err)
	}
	delete(f.keys, key)
}

// rbacSeen is res's AfterWrite: it waits until the feed has applied the
// write.
func (r *Registry) rbacSeen(res *Resource) func(ctx context.Context, obj Object, rev uint64) {
	return r.feedSeen(&r.rbac, res)
}

// feedSeen is the AfterWrite of a resource fed by *fs: it waits until
// the feed has applied the write.
func (r *Registry) feedSeen(fs **rbacFeeds, res *Resource) func(ctx context.Context, obj Object, rev uint64) {
	return func(ctx context.Context, _ Object, rev uint64) {
		r.waitFeed(ctx, *fs, res, func(f *rbacFeed) bool { return f.rev >= rev })
	}
}

// rbacGone is res's AfterDelete: it waits until the feed has removed a
// deleted object.
func (r *Registry) rbacGone(res *Resource) func(ctx context.Context, obj Object, gone bool) {
	return r.feedGone(&r.rbac, res)
}

// feedGone is the AfterDelete of a resource fed by *fs: it waits until
// the feed has removed a deleted object.
func (r *Registry) feedGone(fs **rbacFeeds, res *Resource) func(ctx context.Context, obj Object, gone bool) {
	return func(ctx context.Context, obj Object, gone bool) {
		if !gone {
			return
		}
		key := res.objectKey(obj.Namespace(), obj.Name())
		r.waitFeed(ctx, *fs, res, func(f *rbacFeed) bool { _, ok := f.keys[key]; return !ok })
	}
}

// waitFeed waits until done holds of res's feed in fs, rbacSyncTimeout
// at most.
func (r *Registry) waitFeed(ctx context.Context, fs *rbacFeeds, res *Resource, done func(*rbacFeed) bool) {
	if fs == nil {
		return
	}
	f := fs.feeds[res.Plural]
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
			r.log.Warn("a feed is late", "resource", res.Plural)
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
