// Command apiserver serves the example API of examples/apiserver
// (namespaces, configmaps, widgets.example.com and any CRDs given) on the
// durable store: its objects live in --data-dir and survive restarts and
// crashes. The example server itself lives in the core module, which
// does not depend on bbolt; this command is it with a durable store.
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
// --restore FILE first installs a backup (Store.BackupFile) into an
// empty --data-dir. At start-up a data directory that cannot be written,
// or a damaged file, ends the command with an error saying which.
package main
