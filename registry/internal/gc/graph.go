package gc

import (
	"sync"
)

// graph is the collector's index of the store's ownership edges, kept
// from its watch: which objects reference which owners (by uid), which
// owners are being deleted with a finalizer of the collector's, and the
// objects a change has made due for a look (dirty). It is safe for
// concurrent use: the watch writes it, the worker reads it.
//
// Only objects that matter to the collector have an entry: those with
// ownerReferences, and those being deleted with the orphan or
// foregroundDeletion finalizer. An object with neither costs nothing
// (its events are skipped without decoding), yet its delete still makes
// its dependents due: a DELETED event names the uid that went.
//
// Worked example (uids a, b; keys /cm/a, /cm/b):
//
//	ADDED   /cm/b owners [a]      objects{/cm/b}  dependents{a: {/cm/b}}      dirty{/cm/b}
//	DELETED /cm/a (uid a)         dirty{/cm/b}: its owner went, it is to be collected
//	DELETED /cm/b                 objects{}       dependents{}
//
// and with foreground deletion of a:
//
//	MODIFIED /cm/a deleting, foregroundDeletion   deleting{a: /cm/a}  dirty{/cm/a, /cm/b}
//	DELETED  /cm/b                                dirty{/cm/a}: a dependent of a deleting owner went
//
// A write costs O(its owner references + the dependents of the object
// written when it is deleted or being deleted), never O(objects).
type graph struct {
	mu sync.Mutex
	// objects are the entries by storage key.
	objects map[string]*entry
	// dependents are the keys of the objects referencing an owner, by
	// the owner's uid.
	dependents map[string]map[string]struct{}
	// deleting are the keys of the objects deleted with the orphan or
	// foregroundDeletion finalizer, by uid.
	deleting map[string]string
	// dirty are the keys due for a look, with their resource.
	dirty map[string]Resource
	// unresolved are the keys whose last look found an owner of a kind
	// not served: due again when the served resources change.
	unresolved map[string]Resource
}

// entry is what the graph keeps of one object.
type entry struct {
	res      Resource
	uid      string
	owners   []string // uids of its ownerReferences
	deleting bool     // deleted with a finalizer of the collector's
}

func newGraph() *graph {
	g := &graph{}
	g.reset()
	return g
}

// reset forgets everything: the watch starts again from a full replay.
func (g *graph) reset() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.objects = map[string]*entry{}
	g.dependents = map[string]map[string]struct{}{}
	g.deleting = map[string]string{}
	g.dirty = map[string]Resource{}
	g.unresolved = map[string]Resource{}
}

// has tells whether key has an entry.
func (g *graph) has(key string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.objects[key] != nil
}

// put records obj, the state of key written, and marks what the write
// makes due.
func (g *graph) put(key string, res Resource, obj object) {
	e := &entry{res: res, uid: obj.uid(), deleting: obj.deleting() &&
		(hasFinalizer(obj, finalizerOrphan) || hasFinalizer(obj, finalizerForeground))}
	for _, ref := range ownerRefs(obj) {
		e.owners = append(e.owners, ref.uid)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if old := g.objects[key]; old != nil {
		if old.uid != e.uid {
			g.removeLocked(key, old.uid)
		} else {
			g.unlinkLocked(key, old)
			delete(g.objects, key)
		}
	}
	if len(e.owners) == 0 && !e.deleting {
		delete(g.deleting, e.uid)
		delete(g.unresolved, key)
		return
	}
	g.objects[key] = e
	for _, o := range e.owners {
		deps := g.dependents[o]
		if deps == nil {
			deps = map[string]struct{}{}
			g.dependents[o] = deps
		}
		deps[key] = struct{}{}
	}
	g.dirty[key] = res
	if e.deleting {
		g.deleting[e.uid] = key
		g.markDependentsLocked(e.uid)
	} else {
		delete(g.deleting, e.uid)
	}
}

// remove records the delete of key, whose object had uid.
func (g *graph) remove(key, uid string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.removeLocked(key, uid)
}

func (g *graph) removeLocked(key, uid string) {
	if old := g.objects[key]; old != nil {
		g.unlinkLocked(key, old)
		delete(g.objects, key)
	}
	delete(g.deleting, uid)
	delete(g.unresolved, key)
	g.markDependentsLocked(uid)
}

// unlinkLocked removes e's edges; a deleting owner of e becomes due (a
// dependent of it changed or went).
func (g *graph) unlinkLocked(key string, e *entry) {
	for _, o := range e.owners {
		if deps := g.dependents[o]; deps != nil {
			delete(deps, key)
			if len(deps) == 0 {
				delete(g.dependents, o)
			}
		}
		if k, ok := g.deleting[o]; ok {
			if oe := g.objects[k]; oe != nil {
				g.dirty[k] = oe.res
			}
		}
	}
}

func (g *graph) markDependentsLocked(uid string) {
	for k := range g.dependents[uid] {
		g.dirty[k] = g.objects[k].res
	}
}

// dependentsOf lists the keys of uid's dependents, with their resources.
func (g *graph) dependentsOf(uid string) map[string]Resource {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string]Resource, len(g.dependents[uid]))
	for k := range g.dependents[uid] {
		out[k] = g.objects[k].res
	}
	return out
}

// takeDirty returns the keys due and forgets them.
func (g *graph) takeDirty() map[string]Resource {
	g.mu.Lock()
	defer g.mu.Unlock()
	d := g.dirty
	g.dirty = map[string]Resource{}
	return d
}

// markDirty makes keys due (again).
func (g *graph) markDirty(keys map[string]Resource) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for k, res := range keys {
		g.dirty[k] = res
	}
}

// setUnresolved records whether key's last look found an owner of a kind
// not served.
func (g *graph) setUnresolved(key string, res Resource, unresolved bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if unresolved {
		g.unresolved[key] = res
	} else {
		delete(g.unresolved, key)
	}
}

// markUnresolved makes the unresolved keys due.
func (g *graph) markUnresolved() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for k, res := range g.unresolved {
		g.dirty[k] = res
	}
}
