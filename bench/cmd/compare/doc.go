// Command compare runs kapi and its peers through the same storage
// scenarios in one process and prints one Markdown table (rows: figures,
// columns: peers). With -out it also rewrites the section of a Markdown
// file between <!-- bench-compare:begin --> and <!-- bench-compare:end -->.
//
//	go run ./cmd/compare -n 10000 -out ../BENCHMARKS.md
package main
