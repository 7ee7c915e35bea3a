// Command apiserver serves the example API of examples/apiserver
// (namespaces, configmaps, widgets.example.com and any CRDs given) on the
// durable store: its objects live in --data-dir and survive restarts and
// crashes. The example server itself lives in the core module, which
// does not depend on pebble; this command is it with a durable store.
//
// From the repository's root:
//
//	go run -C storage/durable ./cmd/apiserver --data-dir /tmp/kapi-data --kubeconfig /tmp/kapi.kubeconfig
//
// Stop it (even with kill -9) and start it again with the same
// --data-dir: the objects are there, resourceVersions go on increasing,
// and a watch from a resourceVersion written before the restart resumes
// without a relist.
//
// With --backup FILE, SIGUSR1 writes a backup of the store to FILE while
// it serves (as `etcdctl snapshot save`); --restore FILE first installs
// a backup into an empty --data-dir (as `etcdctl snapshot restore`):
//
//	apiserver --data-dir /tmp/kapi-data --backup /tmp/kapi.backup &
//	kill -USR1 %1                         # writes /tmp/kapi.backup
//	apiserver --restore /tmp/kapi.backup --data-dir /tmp/kapi-restored --listen 127.0.0.1:8081
//
// At start-up a data directory that cannot be written, or a damaged
// file, ends the command with an error saying which. A database whose
// revision marker is lost is refused too (without it, a log cut short
// reads as a crash); --adopt takes it as it is, once checked that it
// reads whole.
package main
