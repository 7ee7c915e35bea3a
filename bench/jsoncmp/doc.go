// Package jsoncmp compares JSON libraries on the operations kapi's request
// paths spend their JSON time in: decoding a stored object into
// map[string]any with exact numbers, encoding such a map back, and
// validating a body. Its tests are the deliverable: the benchmarks measure
// each library side by side on the same objects, and the semantics tests
// record what each library does with the behaviours Kubernetes relies on
// (duplicate keys, big integers, case-sensitive fields, HTML escaping,
// invalid UTF-8, map key order). BENCHMARKS.md ("JSON libraries") holds
// the figures and the recommendation.
package jsoncmp
