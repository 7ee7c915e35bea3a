// Package gc is the registry's built-in garbage collector of
// ownerReferences (DEL-3), with the semantics of kube-controller-manager's:
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
// It keeps an index of ownership (graph.go: dependents by owner uid,
// owners being deleted with its finalizers) from one watch on the whole
// store, which starts with the current state; each change marks due the
// objects it may concern — the object written if it has ownerReferences
// or is being deleted, the dependents of an object deleted or being
// deleted, a deleting owner of a dependent that changed or went — and a
// single worker looks at each due object on its current state (Registry
// is what it needs of the registry). A write costs O(its references +
// the dependents concerned), not O(objects): an object with neither
// ownerReferences nor a deletionTimestamp is skipped without decoding.
// Each look's writes are idempotent and cause events of their own, so
// looks converge; a look that fails is retried. A watch that ends is
// started again and the index rebuilt from its replay.
package gc
