package gc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// Collector is the garbage collector of one registry (see the package
// comment). Start starts it; Close stops it.
type Collector struct {
	reg    Registry
	store  storage.Interface
	log    *slog.Logger
	cancel context.CancelFunc
	done   chan struct{} // closed when the collector has stopped
	kick   chan struct{} // buffered (1): a scan is due
}

// retry is how long the collector waits before retrying a failed scan
// or watch.
const retry = 100 * time.Millisecond

func (c *Collector) trigger() {
	select {
	case c.kick <- struct{}{}:
	default: // a scan is already due
	}
}

func (c *Collector) run(ctx context.Context) {
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
			c.log.Warn("garbage collection scan failed; retrying", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(retry):
			}
			c.trigger()
		}
	}
}

// watch triggers a scan for every change that may concern the collector,
// restarting the store's watch when it ends.
func (c *Collector) watch(ctx context.Context) {
	for ctx.Err() == nil {
		w, err := c.store.Watch(ctx, "/", storage.WatchOptions{Recursive: true})
		if err != nil {
			c.log.Warn("garbage collector cannot watch the store; retrying", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(retry):
			}
			continue
		}
		c.trigger() // whatever changed before the watch started
		c.follow(ctx, w)
		w.Stop()
	}
}

func (c *Collector) follow(ctx context.Context, w watch.Interface) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type == watch.Error {
				return
			}
			if relevant(ev) {
				c.trigger()
			}
		}
	}
}

var (
	ownerRefsKey    = []byte(`"ownerReferences"`)
	deletionTimeKey = []byte(`"deletionTimestamp"`)
)

// relevant tells the events that may call for a scan, without decoding.
func relevant(ev watch.Event) bool {
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
	res Resource
	obj object
}

func (n *node) key() string { return n.res.Key(n.obj.namespace(), n.obj.name()) }

// ownerRef is one metadata.ownerReferences entry.
type ownerRef struct {
	apiVersion, kind, name, uid string
	block                       bool
}

func ownerRefs(obj object) []ownerRef {
	l, _ := obj.meta()["ownerReferences"].([]any)
	out := make([]ownerRef, 0, len(l))
	for _, v := range l {
		m, _ := v.(map[string]any)
		s := func(k string) string { x, _ := m[k].(string); return x }
		b, _ := m["blockOwnerDeletion"].(bool)
		out = append(out, ownerRef{apiVersion: s("apiVersion"), kind: s("kind"), name: s("name"), uid: s("uid"), block: b})
	}
	return out
}

func hasFinalizer(obj object, f string) bool {
	l, _ := obj.meta()["finalizers"].([]any)
	for _, x := range l {
		if x == f {
			return true
		}
	}
	return false
}

// scan runs one pass of the collector over every object.
func (c *Collector) scan(ctx context.Context) error {
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
		case hasFinalizer(n.obj, finalizerOrphan):
			errs = append(errs, c.orphan(ctx, n, dependents[n.obj.uid()]))
		case hasFinalizer(n.obj, finalizerForeground):
			errs = append(errs, c.foreground(ctx, n, dependents[n.obj.uid()]))
		}
	}
	for _, n := range nodes {
		errs = append(errs, c.attemptToDelete(ctx, n, len(dependents[n.obj.uid()]) > 0))
	}
	return errors.Join(errs...)
}

// snapshot reads every object of every resource (once per storage key:
// versions of a resource share their objects).
func (c *Collector) snapshot(ctx context.Context) ([]*node, error) {
	seen := map[string]bool{}
	var nodes []*node
	for _, res := range c.reg.Resources() {
		if seen[res.Prefix()] {
			continue
		}
		seen[res.Prefix()] = true
		l, err := c.store.List(ctx, res.Prefix(), storage.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, it := range l.Items {
			obj, err := c.reg.Decode(it)
			if err != nil {
				continue // corrupt: only an unsafe delete removes it
			}
			nodes = append(nodes, &node{res: res, obj: object(obj)})
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
func (c *Collector) owner(ctx context.Context, dep *node, ref ownerRef) (ownerState, object) {
	res := c.reg.Resource(ref.apiVersion, ref.kind)
	if res == nil || (res.Namespaced() && !dep.res.Namespaced()) {
		return ownerUnresolvable, nil
	}
	ns := ""
	if res.Namespaced() {
		ns = dep.obj.namespace()
	}
	cur, err := c.store.Get(ctx, res.Key(ns, ref.name), storage.GetOptions{})
	switch {
	case storage.IsNotFound(err):
		return ownerAbsent, nil
	case err != nil:
		return ownerUnresolvable, nil
	case cur.UID != ref.uid:
		return ownerAbsent, nil
	}
	obj, err := c.reg.Decode(cur)
	if err != nil {
		return ownerUnresolvable, nil
	}
	return ownerPresent, object(obj)
}

// attemptToDelete deletes dep when none of its owners remains, or drops
// the references to absent owners when some do (kube's
// attemptToDeleteItem).
func (c *Collector) attemptToDelete(ctx context.Context, dep *node, hasDependents bool) error {
	if len(ownerRefs(dep.obj)) == 0 || dep.obj.deleting() {
		return nil
	}
	// Decide on the latest state: this scan may have changed it.
	cur, err := c.store.Get(ctx, dep.key(), storage.GetOptions{})
	if err != nil || cur.UID != dep.obj.uid() {
		return nil // gone or replaced: the next scan sees it
	}
	decoded, err := c.reg.Decode(cur)
	if err != nil {
		return nil
	}
	latest := object(decoded)
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
		case st == ownerPresent && owner.deleting() && hasFinalizer(owner, finalizerForeground):
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
		return c.update(ctx, dep, func(obj object) bool {
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
	o := DeleteOptions{Preconditions: storage.Preconditions{UID: cur.UID, Revision: cur.Revision}}
	o.Foreground = waiting > 0 && hasDependents
	return c.reg.Delete(ctx, dep.res, dep.obj.namespace(), dep.obj.name(), o)
}

// ownerWaiting marks, in attemptToDelete, an owner being deleted in the
// foreground.
const ownerWaiting ownerState = -1

// orphan removes owner's references from its dependents, then the orphan
// finalizer from owner.
func (c *Collector) orphan(ctx context.Context, owner *node, deps []*node) error {
	uid := owner.obj.uid()
	for _, dep := range deps {
		err := c.update(ctx, dep, func(obj object) bool {
			return editOwnerRefs(obj, func(ref ownerRef, _ map[string]any) bool { return ref.uid != uid })
		})
		if err != nil {
			return err
		}
	}
	return c.removeFinalizer(ctx, owner, finalizerOrphan)
}

// foreground removes the foregroundDeletion finalizer from owner once no
// dependent blocks it; attemptToDelete deletes the dependents meanwhile.
func (c *Collector) foreground(ctx context.Context, owner *node, deps []*node) error {
	uid := owner.obj.uid()
	for _, dep := range deps {
		for _, ref := range ownerRefs(dep.obj) {
			if ref.uid == uid && ref.block {
				return nil
			}
		}
	}
	return c.removeFinalizer(ctx, owner, finalizerForeground)
}

func (c *Collector) removeFinalizer(ctx context.Context, n *node, f string) error {
	return c.update(ctx, n, func(obj object) bool {
		l, _ := obj.meta()["finalizers"].([]any)
		out := make([]any, 0, len(l))
		for _, v := range l {
			if v != f {
				out = append(out, v)
			}
		}
		if len(out) == len(l) {
			return false
		}
		obj.meta()["finalizers"] = out
		return true
	})
}

// editOwnerRefs rewrites obj's ownerReferences: keep decides, and may
// edit, each entry. It reports whether anything changed.
func editOwnerRefs(obj object, keep func(ref ownerRef, m map[string]any) bool) bool {
	meta := obj.meta()
	l, _ := meta["ownerReferences"].([]any)
	before, _ := json.Marshal(l)
	out := make([]any, 0, len(l))
	for _, v := range l {
		m, _ := v.(map[string]any)
		if keep(ownerRefs(object{"metadata": map[string]any{"ownerReferences": []any{v}}})[0], m) {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		delete(meta, "ownerReferences")
	} else {
		meta["ownerReferences"] = out
	}
	after, _ := json.Marshal(out)
	return len(out) != len(l) || !bytes.Equal(before, after)
}

// update writes the change edit makes to n's object (if the object is
// still the one the scan saw); a vanished object is not an error.
func (c *Collector) update(ctx context.Context, n *node, edit func(obj object) bool) error {
	uid := n.obj.uid()
	return c.reg.Update(ctx, n.res, n.obj.namespace(), n.obj.name(), func(obj map[string]any) bool {
		return object(obj).uid() == uid && edit(object(obj))
	})
}
