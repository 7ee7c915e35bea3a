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
// It works by whole scans of the registry's objects (Registry is what it
// needs of the registry), one at start and one after every change that
// may matter (a delete, or a write of an object with ownerReferences or a
// deletionTimestamp), seen through a watch on the whole store. Scans coalesce: changes during a scan cause one more.
// Each scan's writes are idempotent, so scans converge.
package gc
