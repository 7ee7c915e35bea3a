// Command profile writes a CPU profile of exactly -ops calls of one kind
// (get or list of every object) on one bench peer, after a preload of -n
// objects that the profile leaves out, so that a function's cumulative
// time divided by -ops is its CPU per call:
//
//	go run ./cmd/profile -peer 'kapi HTTP' -op get -n 10000 -ops 100000 -cpuprofile get.prof
//	go tool pprof -top -cum get.prof
//
// Only the peers without an embedded etcd can be profiled.
package main
