// Package etcd3 is the etcd v3 storage backend: a storage.Interface on
// go.etcd.io/etcd/client/v3, so several kapi servers can share one etcd
// cluster and clients see one consistent resourceVersion sequence.
//
// It lives in a Go module of its own, so that the core module pulls in
// neither etcd nor gRPC.
//
// The mapping, as in k8s.io/apiserver's etcd3 store:
//
//   - a key k is the etcd key Options.Prefix+k, and its value an envelope
//     of the object's UID, labels, fields and bytes (see value.go);
//   - an object's revision is its etcd mod revision, and the store's
//     revision is etcd's (shared by every key of the cluster);
//   - Create, GuaranteedUpdate and Delete are transactions guarded on the
//     key's create or mod revision, so racing writers never lose updates;
//   - reads at a revision are etcd reads at that revision, and a continue
//     token names the first page's revision and the next key;
//   - watches are etcd watches from the revision after the start, with
//     the previous state of each key for selector transitions and
//     DELETED events; bookmarks carry etcd's progress notifications;
//   - Compact is etcd's compaction (which is global to the cluster), and
//     a compacted revision is ErrExpired.
//
// Replicas: any number of Stores, in one process or many, may serve the
// same Prefix of one etcd cluster; they share etcd's revision, so clients
// see one resourceVersion sequence whichever replica they talk to. Give
// them the same continue-token secret (SharedTokens keeps one in etcd).
//
// Faults: every call to etcd is bounded by Options.Timeout and the
// caller's ctx. When etcd is down or has no leader, reads fail with
// storage.ErrUnavailable (nothing changed) and writes with
// storage.ErrTimeout (outcome unknown), which the registry answers as 503
// and 504; watches wait for etcd and resume from their last revision
// (ErrExpired if it was compacted meanwhile).
//
// The Store caches no objects: every read is a round trip to etcd. It
// remembers only the storage.Memo of the latest states it wrote or saw in
// a watch event, so that such a state shares one Memo between the write,
// the events of every watch and reads of it (its encodings and decoded
// form are computed once); older states carry a fresh Memo each time
// they are read. It also remembers the last state it wrote or read of
// its latest 1024 keys, on which an update or a delete tries its
// transaction without reading the key first (see states.go). Put a watch
// cache in front of it for read-heavy loads.
package etcd3
