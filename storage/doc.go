// Package storage defines the Interface every kapi storage backend
// implements, its typed errors, list and watch options, and the label and
// field predicates used to filter without decoding objects.
//
// Keys look like /<group>/<resource>/<namespace>/<name> (or without the
// namespace for cluster-scoped resources), so a prefix ending in "/" names a
// collection and key order is list order.
//
// A backend stores encoded bytes plus the attributes filters need (Object).
// Revisions come from one counter per store: every write gets the next one,
// and an object's resourceVersion is the revision of the write that produced
// it. The bytes a backend stores never contain the resourceVersion; readers
// attach Object.Revision (this is what lets an etcd backend use etcd's
// mod revision). storage/memory is the default backend; storage/storagetest
// is the suite every backend must pass.
package storage
