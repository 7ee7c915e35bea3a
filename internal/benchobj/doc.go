// Package benchobj builds the objects the decode benchmarks of registry
// and storage use: deterministic widgets of a given JSON size, the same
// as bench/jsoncmp's (metadata with labels, annotations and
// managedFields; containers with env, ports and resources; data entries;
// integers, floats, booleans, a null, escapes, non-ASCII text and <>&).
package benchobj
