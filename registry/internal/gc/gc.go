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
	kick   chan struct{} // buffered (1): keys are due
	graph  *graph

	// Owned by the watch goroutine.
	prefixes map[string]Resource // resources by storage key prefix
	// Owned by the worker.
	resources int // how many resources were served at the last pass
}

// retry is how long the collector waits before retrying a failed look
// or watch.
const retry = 100 * time.Millisecond

func (c *Collector) trigger() {
	select {
	case c.kick <- struct{}{}:
	default: // a pass is already due
	}
}

// run is the worker: each pass looks at the keys due, one at a time.
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
		if n := len(c.reg.Resources()); n != c.resources {
			c.resources = n
			c.graph.markUnresolved() // an owner's kind may be served now
		}
		failed := map[string]Resource{}
		var errs []error
		for key, res := range c.graph.takeDirty() {
			if err := c.look(ctx, key, res); err != nil {
				failed[key] = res
				errs = append(errs, err)
			}
		}
		if len(failed) > 0 && ctx.Err() == nil {
			c.log.Warn("garbage collection failed; retrying", "objects", len(failed), "err", errors.Join(errs...))
			select {
			case <-ctx.Done():
				return
			case <-time.After(retry):
			}
			c.graph.markDirty(failed)
			c.trigger()
		}
	}
}

// watch keeps the graph from a watch on the whole store, which starts
// with the current state (so a restart rebuilds the graph whole).
func (c *Collector) watch(ctx context.Context) {
	for ctx.Err() == nil {
		w, err := c.store.Watch(ctx, "/", storage.WatchOptions{Recursive: true, Initial: true})
		if err != nil {
			c.log.Warn("garbage collector cannot watch the store; retrying", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(retry):
			}
			continue
		}
		c.graph.reset()
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
			if c.apply(ev) {
				c.trigger()
			}
		}
	}
}

var (
	ownerRefsKey    = []byte(`"ownerReferences"`)
	deletionTimeKey = []byte(`"deletionTimestamp"`)
)

// apply records an event in the graph; it reports whether the event may
// have made keys due. An object written with neither ownerReferences nor
// a deletionTimestamp, and unknown to the graph, is skipped undecoded.
func (c *Collector) apply(ev watch.Event) bool {
	so, ok := ev.Object.(storage.Object)
	if !ok {
		return false
	}
	switch ev.Type {
	case watch.Deleted:
		uid := so.UID
		if uid == "" {
			if obj, err := c.reg.Decode(so); err == nil {
				uid = object(obj).uid()
			}
		}
		c.graph.remove(so.Key, uid)
		return true
	case watch.Added, watch.Modified:
		if !bytes.Contains(so.Value, ownerRefsKey) && !bytes.Contains(so.Value, deletionTimeKey) && !c.graph.has(so.Key) {
			return false
		}
		res := c.resourceOf(so.Key)
		if res == nil {
			return false // not served: the collector cannot act on it
		}
		obj, err := c.reg.Decode(so)
		if err != nil {
			return false // corrupt: only an unsafe delete removes it
		}
		c.graph.put(so.Key, res, object(obj))
		return true
	}
	return false
}

// resourceOf is the served resource whose Prefix key starts with (a
// prefix ends at a slash), looked up again in Resources when unknown.
func (c *Collector) resourceOf(key string) Resource {
	find := func() Resource {
		for i := 1; i < len(key); i++ {
			if key[i] == '/' {
				if res, ok := c.prefixes[key[:i+1]]; ok {
					return res
				}
			}
		}
		return nil
	}
	if res := find(); res != nil {
		return res
	}
	c.prefixes = map[string]Resource{}
	for _, res := range c.reg.Resources() {
		c.prefixes[res.Prefix()] = res
	}
	return find()
}

// look decides on the object at key (kube's attemptToDeleteItem, and
// the orphan and foreground finalizers of an owner being deleted),
// reading its current state.
func (c *Collector) look(ctx context.Context, key string, res Resource) error {
	cur, err := c.store.Get(ctx, key, storage.GetOptions{})
	if storage.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	obj, err := c.reg.Decode(cur)
	if err != nil {
		return nil // corrupt: only an unsafe delete removes it
	}
	n := &node{res: res, obj: object(obj)}
	if n.obj.deleting() {
		switch {
		case hasFinalizer(n.obj, finalizerOrphan):
			deps, err := c.dependents(ctx, n.obj.uid())
			if err != nil {
				return err
			}
			if err := c.orphan(ctx, n, deps); err != nil {
				return err
			}
		case hasFinalizer(n.obj, finalizerForeground):
			deps, err := c.dependents(ctx, n.obj.uid())
			if err != nil {
				return err
			}
			if err := c.foreground(ctx, n, deps); err != nil {
				return err
			}
		}
	}
	unresolved, err := c.attemptToDelete(ctx, n, len(c.graph.dependentsOf(n.obj.uid())) > 0)
	c.graph.setUnresolved(key, res, unresolved)
	return err
}

// dependents reads the current state of uid's dependents, as the graph
// lists them (those gone meanwhile left out).
func (c *Collector) dependents(ctx context.Context, uid string) ([]*node, error) {
	var out []*node
	for key, res := range c.graph.dependentsOf(uid) {
		cur, err := c.store.Get(ctx, key, storage.GetOptions{})
		if storage.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		obj, err := c.reg.Decode(cur)
		if err != nil {
			continue
		}
		out = append(out, &node{res: res, obj: object(obj)})
	}
	return out, nil
}

// node is one object the collector looks at.
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
// attemptToDeleteItem). It reports whether an owner's kind is not served
// (the dependent is kept for it).
func (c *Collector) attemptToDelete(ctx context.Context, dep *node, hasDependents bool) (unresolved bool, err error) {
	if len(ownerRefs(dep.obj)) == 0 || dep.obj.deleting() {
		return false, nil
	}
	// Decide on the latest state: this scan may have changed it.
	cur, err := c.store.Get(ctx, dep.key(), storage.GetOptions{})
	if err != nil || cur.UID != dep.obj.uid() {
		return false, nil // gone or replaced: its own event makes it due
	}
	decoded, err := c.reg.Decode(cur)
	if err != nil {
		return false, nil
	}
	latest := object(decoded)
	dep = &node{res: dep.res, obj: latest}
	refs := ownerRefs(latest)
	if len(refs) == 0 || latest.deleting() {
		return false, nil
	}
	var solid, dangling, waiting int
	state := make([]ownerState, len(refs))
	for i, ref := range refs {
		st, owner := c.owner(ctx, dep, ref)
		state[i] = st
		unresolved = unresolved || st == ownerUnresolvable
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
		return unresolved, nil
	case solid > 0:
		// Keep dep for its remaining owners; forget the absent ones and
		// do not block those deleting in the foreground.
		return unresolved, c.update(ctx, dep, func(obj object) bool {
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
	return unresolved, c.reg.Delete(ctx, dep.res, dep.obj.namespace(), dep.obj.name(), o)
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
// still the one the collector read); a vanished object is not an error.
func (c *Collector) update(ctx context.Context, n *node, edit func(obj object) bool) error {
	uid := n.obj.uid()
	return c.reg.Update(ctx, n.res, n.obj.namespace(), n.obj.name(), func(obj map[string]any) bool {
		return object(obj).uid() == uid && edit(object(obj))
	})
}
