// Package memory is kapi's default storage backend: an MVCC store that
// keeps the current state in memory, in a copy-on-write B-tree, and its
// recent history in a watch.Broadcaster log.
//
// Every write takes the next revision from one counter and appends its
// change (new state and previous state) to the log, which is at once the
// watch stream and the history that Exact reads at older revisions undo.
// Paginated lists read a snapshot (an O(1) clone of the tree) taken by
// their first page, so every page sees the collection as of that page.
package memory
