// Package revlru keeps a few values by revision, least recently used
// evicted first: the snapshots that storage/memory and storage/cache keep
// for paginated lists and Exact reads.
//
// Worked example, Max 2: Put(5, a), Put(6, b), Get(5) (a is now the most
// recently used), Put(7, c) evicts b; Expire(6) then drops a (revision 5
// is older than the history), leaving c.
package revlru
