// Package keytree is the B-tree of object states by key that
// storage/memory and storage/cache keep, with what goes with it: the
// live tree's per-directory key counts, copy-on-write snapshots with
// their key counts, the iterator of the initial state a watch starts
// with, and the filter of a watch's changes.
//
// The tree's items are immutable: a write replaces a key's item, so a
// clone of the tree (O(1), copy-on-write) keeps the states it saw:
//
//	live tree at r7:  {a=1, c=3}   snapshot @7 = Clone()
//	r8 writes c=4:    live {a=1, c=4}, the live tree copies c's path
//	snapshot @7:      still {a=1, c=3}; it costs only the path copied
//
// Concurrency: the owner of a Live guards it with its own lock (writes
// exclusive, reads and Clone shared; Live serializes the clones); a
// Snapshot is safe for concurrent use.
package keytree
