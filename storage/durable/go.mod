module github.com/kapi-dev/kapi/storage/durable

go 1.26.0

require (
	github.com/kapi-dev/kapi v0.0.0
	go.etcd.io/bbolt v1.5.0
)

require (
	github.com/anishathalye/porcupine v1.3.1 // indirect
	github.com/go-json-experiment/json v1.27.2 // indirect
	github.com/google/btree v1.1.3 // indirect
	golang.org/x/sys v0.45.0 // indirect
)

replace github.com/kapi-dev/kapi => ../..
