# The README's test command is `make test`; CI (.ci/run) calls exactly that.
GO ?= go
FUZZTIME ?= 10s

.PHONY: test lint unit conformance bench fuzz

## test: everything CI checks — formatting, vet, race tests of every module, benchmark smoke run.
test: lint unit conformance
	$(GO) test -run '^$$' -bench . -benchtime 1x ./...
	cd cel && $(GO) test -run '^$$' -bench . -benchtime 1x ./...
	cd envtest && $(GO) test -run '^$$' -bench . -benchtime 1x ./...

STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

# The Go modules besides the core: the etcd3 backend, the durable backend
# (pebble), CEL rules, the real-client conformance checks, the side-by-side
# benchmarks, the reference implementations' start-up (kube-apiserver
# built from k8s.io/kubernetes), envtest (controller tests, a drop-in for
# controller-runtime's envtest), metrics (Prometheus' client), the
# generator of the built-in kinds (gen/builtin), Helm's Go SDK against
# the example server (helmtest) and KubeRay's envtest suite on kapi's
# envtest (kuberaytest: vetted here, run by `make kuberay`).
MODULES = storage/etcd3 storage/durable cel metrics conformance bench reference envtest gen/builtin helmtest kuberaytest

## lint: gofmt, go vet and staticcheck over every module.
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	@for mod in $(MODULES); do \
	  echo "vet, staticcheck: $$mod"; \
	  (cd $$mod && $(GO) vet ./... && $(GO) run $(STATICCHECK) ./...) || exit 1; \
	done

## unit: the tests of the core module, the etcd backend (on an embedded etcd), the durable backend (its crash test included), CEL rules, the bench module's table, envtest (and its example suite compiled against controller-runtime's envtest: -tags crenvtest), helmtest (Helm's SDK installs, upgrades, rolls back and uninstalls a chart) and the reference module (which builds kube-apiserver: minutes the first time on a machine, seconds after, before the conformance tests start it), under the race detector.
unit:
	$(GO) test -race -count 1 ./...
	cd storage/etcd3 && $(GO) test -race -count 1 ./...
	cd storage/durable && $(GO) test -race -count 1 ./...
	cd cel && $(GO) test -race -count 1 ./...
	cd metrics && $(GO) test -race -count 1 ./...
	cd bench && $(GO) test -count 1 ./...
	cd reference && $(GO) test -race -count 1 -timeout 40m ./...
	cd envtest && $(GO) test -race -count 1 ./... && $(GO) vet -tags crenvtest ./...
	cd gen/builtin && $(GO) test -count 1 ./...
	cd helmtest && $(GO) test -race -count 1 ./...

## conformance: real clients (client-go, kubectl) against the example server,
## on the in-memory store, on etcd3 (an embedded etcd), on the watch cache in front of etcd3 and on the durable store (pebble, synced).
conformance:
	cd conformance && $(GO) test -race -count 1 ./...
	cd conformance && KAPI_CONFORMANCE_STORAGE=etcd3 $(GO) test -race -count 1 ./...
	cd conformance && KAPI_CONFORMANCE_STORAGE=cache+etcd3 $(GO) test -race -count 1 ./...
	cd conformance && KAPI_CONFORMANCE_STORAGE=durable $(GO) test -race -count 1 ./...

## bench: every benchmark, with allocations (the conformance module holds the side-by-side codec benchmarks against apimachinery).
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
	cd cel && $(GO) test -run '^$$' -bench . -benchmem ./...
	cd conformance && $(GO) test -run '^$$' -bench . -benchmem ./...

.PHONY: kuberay
## kuberay: KubeRay's controller suite (ray-operator v1.5.0, its unit tests and 173 Ginkgo specs, about 9 minutes: its specs wait out the reconcilers' 10 s requeues) on kapi's envtest, its suite_test.go changed in its envtest import alone; not part of `make test` for its time.
kuberay:
	cd kuberaytest && $(GO) test -count 1 -timeout 30m ./...

.PHONY: bench-compare
## bench-compare: kapi beside client-go's ObjectTracker, controller-runtime's fake client, k8s.io/apiserver's etcd3 store and cacher, and (over HTTP, and client-go through the in-process transport) apiextensions-apiserver, one table; rewrites BENCHMARKS.md's bench-compare section.
bench-compare:
	cd bench && $(GO) run ./cmd/compare -n 10000 -out ../BENCHMARKS.md

## fuzz: each fuzz target of the core module, storage/etcd3, storage/durable and cel for FUZZTIME.
fuzz:
	@for mod in . storage/etcd3 storage/durable cel; do \
	  for pkg in $$(cd $$mod && $(GO) list ./...); do \
	    for f in $$(cd $$mod && $(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	      echo "fuzz $$pkg $$f"; \
	      (cd $$mod && $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg) || exit 1; \
	    done; \
	  done; \
	done

.PHONY: stress
STRESS_OPS ?= 500000
SERVE_STRESS_OPS ?= 300

STRESS_RESTARTS ?= 40

## stress: the storage linearizability check at length (STRESS_OPS operations per backend) under the race detector; `make test` runs 100000 on the memory store and 10000 per backend in storagetest.Run. Then serving under load on loopback: the in-flight limit holding with nothing lost or duplicated (32 clients × SERVE_STRESS_OPS creates), slow-header, stalled-body and slow-reader clients cut off while others are served. Then the durable store's crash test: STRESS_RESTARTS kills (SIGKILL) of its server under writers, loopback only, the history across them checked (`make test` runs 3).
stress:
	KAPI_SERVE_STRESS_OPS=$(SERVE_STRESS_OPS) $(GO) test -race -count 1 -timeout 30m -run '^(TestStressMaxInFlight|TestSlowReaderCutOff|TestStalledClients)$$' -v ./serve/
	KAPI_LINEARIZABILITY_OPS=$(STRESS_OPS) $(GO) test -race -count 1 -timeout 30m -run '^TestLinearizable' -v ./storage/storagetest/
	@if [ -f storage/etcd3/go.mod ]; then \
	  cd storage/etcd3 && KAPI_LINEARIZABILITY_OPS=$(STRESS_OPS) $(GO) test -race -count 1 -timeout 60m -run 'Conformance/Linearizable' -v ./...; \
	fi
	cd storage/durable && KAPI_LINEARIZABILITY_OPS=$(STRESS_OPS) $(GO) test -race -count 1 -timeout 60m -run 'Conformance/Linearizable' -v .
	cd storage/durable && KAPI_CRASH_RESTARTS=$(STRESS_RESTARTS) $(GO) test -count 1 -timeout 30m -run '^TestCrash$$' -v ./cmd/apiserver/

.PHONY: proto
## proto: regenerate codec/protobuf's committed descriptor set from its .proto files (needs protoc; building and testing do not).
proto:
	cd codec/protobuf/proto && protoc --include_imports --descriptor_set_out=../descriptors.binpb $$(find k8s.io -name '*.proto' | LC_ALL=C sort)

.PHONY: generate
## generate: rewrite the built-in kinds' generated files (builtin/zz_generated_kinds.go, builtin/schemas.json.gz, builtin/zz_generated_gostruct*.go, codec/protobuf/proto/k8s.io/api/...) from k8s.io/api and k8s.io/kubernetes with gen/builtin, then the descriptor set; gen/builtin's test fails while they are stale.
generate:
	cd gen/builtin && $(GO) run . -root ../..
	$(MAKE) proto
