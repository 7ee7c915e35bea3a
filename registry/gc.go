package registry

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// The built-in garbage collector of ownerReferences (DEL-3), with the
// semantics of kube-controller-manager's:
//
//   - a dependent none of whose owners exists any more (by uid; a
//     namespaced owner is looked up in the dependent's namespace) is
//     deleted, in the background;
//   - an owner deleted with the orphan finalizer (propagationPolicy
//     Orphan) loses its dependents' ownerReferences to it, then the
//     finalizer, and goes;
//   - an owner deleted with the foregroundDeletion finalizer
//     (propagationPolicy Foreground) has its dependents deleted first; it
//     loses the finalizer, and goes, once no dependent whose reference
//     has blockOwnerDeletion remains.
//
// References the collector cannot resolve (a kind the registry does not
// serve, a namespaced owner of a cluster-scoped dependent) keep the
// dependent, as kube's do.
//
// It works by whole scans of the registry's objects, one at start and one
// after every change that may matter (a delete, or a write of an object
// with ownerReferences or a deletionTimestamp), seen through a watch on
// the whole store. Scans coalesce: changes during a scan cause one more.
// Each scan's writes are idempotent, so scans converge.
type collector struct {
	r      *Registry
	cancel context.CancelFunc
	done   chan struct{} // closed when the collector has stopped
	kick   chan struct{} // buffered (1): a scan is due
}

// gcManager is the field manager of the collector's writes, as kube's.
const gcManager = "kube-controller-manager"

// gcRetry is how long the collector waits before retrying a failed scan
// or watch.
const gcRetry = 100 * time.Millisecond

func (r *Registry) startGC() *collector {
	ctx, cancel := context.WithCancel(context.Background())
	c := &collector{r: r, cancel: cancel, done: make(chan struct{}), kick: make(chan struct{}, 1)}
	go c.run(ctx) // owned by c; ends with Close
	return c
}

// Close stops the registry's background work (the garbage collector) and
// waits for it to end. The registry still serves requests afterwards.
func (r *Registry) Close() error {
	if r.gc != nil {
		r.gc.cancel()
		<-r.gc.done
	}
	return nil
}

func (c *collector) trigger() {
	select {
	case c.kick <- struct{}{}:
	default: // a scan is already due
	}
}

func (c *collector) run(ctx context.Context) {
	defer close(c.done)
	watching := make(chan struct{})
	go func() { // ends with ctx
		defer close(watching)
		c.watch(ctx)
	}()
	defer func() { <-watching }()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		}
		if err := c.scan(ctx); err != nil && ctx.Err() == nil {
			c.r.log.Warn("garbage collection scan failed; retrying", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(gcRetry):
			}
			c.trigger()
		}
	}
}

// watch triggers a scan for every change that may concern the collector,
// restarting the store's watch when it ends.
func (c *collector) watch(ctx context.Context) {
	for ctx.Err() == nil {
		w, err := c.r.store.Watch(ctx, "/", storage.WatchOptions{Recursive: true})
		if err != nil {
			c.r.log.Warn("garbage collector cannot watch the store; retrying", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(gcRetry):
			}
			continue
		}
		c.trigger() // whatever changed before the watch started
		c.follow(ctx, w)
		w.Stop()
	}
}

func (c *collector) follow(ctx context.Context, w watch.Interface) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type == watch.Error {
				return
			}
			if gcRelevant(ev) {
				c.trigger()
			}
		}
	}
}

var (
	ownerRefsKey    = []byte(`"ownerReferences"`)
	deletionTimeKey = []byte(`"deletionTimestamp"`)
)

// gcRelevant tells the events that may call for a scan, without decoding.
func gcRelevant(ev watch.Event) bool {
	switch ev.Type {
	case watch.Deleted:
		return true
	case watch.Added, watch.Modified:
		so, ok := ev.Object.(storage.Object)
		return ok && (bytes.Contains(so.Value, ownerRefsKey) || bytes.Contains(so.Value, deletionTimeKey))
	}
	return false
}

// node is one object seen by a scan.
type node struct {
	res *Resource
	obj Object
}

func (n *node) key() string { return n.res.objectKey(n.obj.Namespace(), n.obj.Name()) }

// ownerRef is one metadata.ownerReferences entry.
type ownerRef struct {
	apiVersion, kind, name, uid string
	block                       bool
}

func ownerRefs(obj Object) []ownerRef {
	l, _ := obj.Meta()["ownerReferences"].([]any)
	out := make([]ownerRef, 0, len(l))
	for _, v := range l {
		m, _ := v.(map[string]any)
		s := func(k string) string { x, _ := m[k].(string); return x }
		b, _ := m["blockOwnerDeletion"].(bool)
		out = append(out, ownerRef{apiVersion: s("apiVersion"), kind: s("kind"), name: s("name"), uid: s("uid"), block: b})
	}
	return out
}

func hasFinalizer(obj Object, f string) bool {
	for _, x := range obj.Finalizers() {
		if x == f {
			return true
		}
	}
	return false
}

// scan runs one pass of the collector over every object.
func (c *collector) scan(ctx context.Context) error {
	nodes, err := c.snapshot(ctx)
	if err != nil {
		return err
	}
	dependents := map[string][]*node{} // by owner uid
	for _, n := range nodes {
		for _, ref := range ownerRefs(n.obj) {
			dependents[ref.uid] = append(dependents[ref.uid], n)
		}
	}
	var errs []error
	for _, n := range nodes {
		if !n.obj.deleting() {
			continue
		}
		switch {
		case hasFinalizer(n.obj, FinalizerOrphan):
			errs = append(errs, c.orphan(ctx, n, dependents[n.obj.UID()]))
		case hasFinalizer(n.obj, FinalizerForeground):
			errs = append(errs, c.foreground(ctx, n, dependents[n.obj.UID()]))
		}
	}
	for _, n := range nodes {
		errs = append(errs, c.attemptToDelete(ctx, n, len(dependents[n.obj.UID()]) > 0))
	}
	return errors.Join(errs...)
}

// snapshot reads every object of every resource (once per storage key:
// versions of a resource share their objects).
func (c *collector) snapshot(ctx context.Context) ([]*node, error) {
	seen := map[string]bool{}
	var nodes []*node
	for _, res := range c.r.all() {
		if seen[res.keyPrefix()] {
			continue
		}
		seen[res.keyPrefix()] = true
		l, err := c.r.store.List(ctx, res.keyPrefix(), storage.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, it := range l.Items {
			obj, err := decodeStored(it.Value, it.Revision)
			if err != nil {
				continue // corrupt: only an unsafe delete removes it
			}
			nodes = append(nodes, &node{res: res, obj: obj})
		}
	}
	return nodes, nil
}

// ownerState is what a reference points at.
type ownerState int

const (
	ownerPresent ownerState = iota
	ownerAbsent
	ownerUnresolvable // kept: kube neither deletes nor orphans for it
)

// owner resolves ref, a reference of dep, with a live read: a namespaced
// owner lives in the dependent's namespace, and a cluster-scoped
// dependent cannot have one.
func (c *collector) owner(ctx context.Context, dep *node, ref ownerRef) (ownerState, Object) {
	res := c.r.resourceForKind(ref.apiVersion, ref.kind)
	if res == nil || (res.Namespaced && !dep.res.Namespaced) {
		return ownerUnresolvable, nil
	}
	ns := ""
	if res.Namespaced {
		ns = dep.obj.Namespace()
	}
	cur, err := c.r.store.Get(ctx, res.objectKey(ns, ref.name), storage.GetOptions{})
	switch {
	case storage.IsNotFound(err):
		return ownerAbsent, nil
	case err != nil:
		return ownerUnresolvable, nil
	case cur.UID != ref.uid:
		return ownerAbsent, nil
	}
	obj, err := decodeStored(cur.Value, cur.Revision)
	if err != nil {
		return ownerUnresolvable, nil
	}
	return ownerPresent, obj
}

// resourceForKind finds the served resource of an apiVersion and kind, or
// of the kind in another version of the same group.
func (r *Registry) resourceForKind(apiVersion, kind string) *Resource {
	group, _, _ := strings.Cut(apiVersion, "/")
	if !strings.Contains(apiVersion, "/") {
		group = ""
	}
	var other *Resource
	for _, res := range r.all() {
		if res.Kind != kind {
			continue
		}
		if res.GroupVersion() == apiVersion {
			return res
		}
		if res.Group == group {
			other = res
		}
	}
	return other
}

// attemptToDelete deletes dep when none of its owners remains, or drops
// the references to absent owners when some do (kube's
// attemptToDeleteItem).
func (c *collector) attemptToDelete(ctx context.Context, dep *node, hasDependents bool) error {
	if len(ownerRefs(dep.obj)) == 0 || dep.obj.deleting() {
		return nil
	}
	// Decide on the latest state: this scan may have changed it.
	cur, err := c.r.store.Get(ctx, dep.key(), storage.GetOptions{})
	if err != nil || cur.UID != dep.obj.UID() {
		return nil // gone or replaced: the next scan sees it
	}
	latest, err := decodeStored(cur.Value, cur.Revision)
	if err != nil {
		return nil
	}
	dep = &node{res: dep.res, obj: latest}
	refs := ownerRefs(latest)
	if len(refs) == 0 || latest.deleting() {
		return nil
	}
	var solid, dangling, waiting int
	state := make([]ownerState, len(refs))
	for i, ref := range refs {
		st, owner := c.owner(ctx, dep, ref)
		state[i] = st
		switch {
		case st == ownerAbsent:
			dangling++
		case st == ownerPresent && owner.deleting() && hasFinalizer(owner, FinalizerForeground):
			waiting++
			state[i] = ownerWaiting
		default:
			solid++
		}
	}
	switch {
	case dangling == 0 && waiting == 0:
		return nil
	case solid > 0:
		// Keep dep for its remaining owners; forget the absent ones and
		// do not block those deleting in the foreground.
		return c.update(ctx, dep, func(obj Object) bool {
			return editOwnerRefs(obj, func(ref ownerRef, m map[string]any) (keep bool) {
				for i, r := range refs {
					if r.uid != ref.uid {
						continue
					}
					switch state[i] {
					case ownerAbsent:
						return false
					case ownerWaiting:
						if ref.block {
							m["blockOwnerDeletion"] = false
						}
					}
				}
				return true
			})
		})
	}
	o := deleteOptions{writeOptions: writeOptions{manager: gcManager}}
	o.preconditions = storage.Preconditions{UID: cur.UID, Revision: cur.Revision}
	if waiting > 0 && hasDependents {
		o.propagation = PropagationForeground
	}
	_, _, err = c.r.delete(ctx, dep.res, dep.obj.Namespace(), dep.obj.Name(), o)
	return ignoreGone(err)
}

// ownerWaiting marks, in attemptToDelete, an owner being deleted in the
// foreground.
const ownerWaiting ownerState = -1

// orphan removes owner's references from its dependents, then the orphan
// finalizer from owner.
func (c *collector) orphan(ctx context.Context, owner *node, deps []*node) error {
	uid := owner.obj.UID()
	for _, dep := range deps {
		err := c.update(ctx, dep, func(obj Object) bool {
			return editOwnerRefs(obj, func(ref ownerRef, _ map[string]any) bool { return ref.uid != uid })
		})
		if err != nil {
			return err
		}
	}
	return c.removeFinalizer(ctx, owner, FinalizerOrphan)
}

// foreground removes the foregroundDeletion finalizer from owner once no
// dependent blocks it; attemptToDelete deletes the dependents meanwhile.
func (c *collector) foreground(ctx context.Context, owner *node, deps []*node) error {
	uid := owner.obj.UID()
	for _, dep := range deps {
		for _, ref := range ownerRefs(dep.obj) {
			if ref.uid == uid && ref.block {
				return nil
			}
		}
	}
	return c.removeFinalizer(ctx, owner, FinalizerForeground)
}

func (c *collector) removeFinalizer(ctx context.Context, n *node, f string) error {
	return c.update(ctx, n, func(obj Object) bool {
		l, _ := obj.Meta()["finalizers"].([]any)
		out := make([]any, 0, len(l))
		for _, v := range l {
			if v != f {
				out = append(out, v)
			}
		}
		if len(out) == len(l) {
			return false
		}
		obj.Meta()["finalizers"] = out
		return true
	})
}

// editOwnerRefs rewrites obj's ownerReferences: keep decides, and may
// edit, each entry. It reports whether anything changed.
func editOwnerRefs(obj Object, keep func(ref ownerRef, m map[string]any) bool) bool {
	meta := obj.Meta()
	l, _ := meta["ownerReferences"].([]any)
	before := mustJSON(l)
	out := make([]any, 0, len(l))
	for _, v := range l {
		m, _ := v.(map[string]any)
		if keep(ownerRefs(Object{"metadata": map[string]any{"ownerReferences": []any{v}}})[0], m) {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		delete(meta, "ownerReferences")
	} else {
		meta["ownerReferences"] = out
	}
	return len(out) != len(l) || !bytes.Equal(before, mustJSON(out))
}

// update writes the change edit makes to n's object (if the object is
// still the one the scan saw); a vanished object is not an error.
func (c *collector) update(ctx context.Context, n *node, edit func(obj Object) bool) error {
	uid := n.obj.UID()
	_, err := c.r.write(ctx, n.res, n.obj.Namespace(), n.obj.Name(), writeOptions{manager: gcManager},
		func(old Object, cur storage.Object) (Object, error) {
			if old.UID() != uid {
				return nil, errUnchanged
			}
			next := old.deepCopy()
			if !edit(next) {
				return nil, errUnchanged
			}
			return next, nil
		})
	if errors.Is(err, errUnchanged) {
		return nil
	}
	return ignoreGone(err)
}

// ignoreGone drops the errors of an object that went or was replaced
// meanwhile: the next scan sees the new state.
func ignoreGone(err error) error {
	switch ReasonOf(err) {
	case "NotFound", "Conflict":
		return nil
	}
	return err
}
