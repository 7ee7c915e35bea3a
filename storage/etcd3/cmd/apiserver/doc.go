// Command apiserver serves the example API of examples/apiserver
// (namespaces, configmaps, widgets.example.com and any CRDs given) on
// etcd. Several of them on one etcd (and one --etcd-prefix) are replicas:
// clients see one resourceVersion sequence whichever they talk to.
//
// A one-command demo, with an embedded etcd keeping its data in a
// directory (its client port is 127.0.0.1:2379):
//
//	go run ./cmd/apiserver --embedded-etcd /tmp/kapi-etcd --addr 127.0.0.1:8080
//
// A second replica on the same etcd:
//
//	go run ./cmd/apiserver --etcd-servers http://127.0.0.1:2379 --addr 127.0.0.1:8081
//
// On an etcd that serves https and asks for client certificates:
//
//	go run ./cmd/apiserver --etcd-servers https://10.0.0.1:2379 \
//		--etcd-cafile ca.pem --etcd-certfile client.pem --etcd-keyfile client-key.pem
//
// When etcd does not answer within --etcd-timeout the command exits, with
// the reason its connection failed (say "tls: certificate required").
package main
