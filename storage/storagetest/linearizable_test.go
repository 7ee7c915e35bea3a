package storagetest

import (
	"context"
	"errors"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

func newMemory(t *testing.T) storage.Interface {
	s := memory.New(memory.Options{Wait: 100 * time.Millisecond})
	t.Cleanup(s.Close)
	return s
}

// TestLinearizableMemory checks a long history of the memory store:
// 100,000 operations unless $KAPI_LINEARIZABILITY_OPS asks for another
// count (Run's own check is shorter, to suit slower backends).
func TestLinearizableMemory(t *testing.T) {
	ops := 100000
	if v, err := strconv.Atoi(os.Getenv(OpsEnv)); err == nil && v > 0 {
		ops = v
	}
	RunLinearizable(t, newMemory, LinearizableOptions{Ops: ops})
}

// Broken stores: each breaks one guarantee, and the check must say so.

// staleGet answers three Gets of four per key from a cache: a stale read.
type staleGet struct {
	storage.Interface
	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	o    storage.Object
	err  error
	uses int
}

func (s *staleGet) Get(ctx context.Context, key string, opts storage.GetOptions) (storage.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.cache[key]
	if !ok || c.uses == 3 {
		o, err := s.Interface.Get(ctx, key, opts)
		c = cached{o: o, err: err}
	} else {
		c.uses++
	}
	s.cache[key] = c
	return c.o, c.err
}

// lostUpdate drops the revision precondition of GuaranteedUpdate, so a
// compare-and-swap from a stale read overwrites a newer write.
type lostUpdate struct{ storage.Interface }

func (s lostUpdate) GuaranteedUpdate(ctx context.Context, key string, opts storage.UpdateOptions, fn storage.UpdateFunc) (storage.Object, error) {
	opts.Preconditions.Revision = 0
	return s.Interface.GuaranteedUpdate(ctx, key, opts, fn)
}

// staleList serves a most-recent List from the revision before the
// current one (an Exact read of history), as a lagging cache would.
type staleList struct{ storage.Interface }

func (s staleList) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	if opts.Match == rv.MostRecent && opts.Continue == "" {
		if cur, err := s.Revision(ctx); err == nil && cur > 1 {
			opts.Match, opts.Revision = rv.Exact, cur-1
		}
	}
	return s.Interface.List(ctx, prefix, opts)
}

func TestLinearizableBrokenStores(t *testing.T) {
	tests := []struct {
		name string
		wrap func(storage.Interface) storage.Interface
	}{
		{"StaleGet", func(s storage.Interface) storage.Interface {
			return &staleGet{Interface: s, cache: map[string]cached{}}
		}},
		{"LostUpdate", func(s storage.Interface) storage.Interface { return lostUpdate{s} }},
		{"StaleList", func(s storage.Interface) storage.Interface { return staleList{s} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := CheckLinearizable(t.Context(), tt.wrap(newMemory(t)), LinearizableOptions{Ops: 8192})
			if err != nil {
				t.Fatal(err)
			}
			if r.Linearizable || r.TimedOut {
				t.Fatalf("%v: got linearizable %v, timed out %v; want a failure", r, r.Linearizable, r.TimedOut)
			}
			t.Logf("as wanted, not linearizable:\n%s", r.Failure)
		})
	}
}

// expiringPages fails five continuations (the odd ones among the first
// ten) with ErrExpired, as a store that compacted the first page's
// revision would.
type expiringPages struct {
	storage.Interface
	mu sync.Mutex
	n  int
}

func (s *expiringPages) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	if opts.Continue != "" {
		s.mu.Lock()
		s.n++
		odd := s.n%2 == 1 && s.n < 10
		s.mu.Unlock()
		if odd {
			return storage.ListResult{}, storage.NewError(storage.ErrExpired, prefix, "compacted")
		}
	}
	return s.Interface.List(ctx, prefix, opts)
}

func TestLinearizableExpiredContinuation(t *testing.T) {
	s := &expiringPages{Interface: newMemory(t)}
	r, err := CheckLinearizable(t.Context(), s, LinearizableOptions{Ops: 2048})
	if err != nil || !r.Linearizable {
		t.Fatalf("got %v, linearizable %v, error %v; want a pass, lists starting over", r, r.Linearizable, err)
	}
	if s.n == 0 {
		t.Fatal("no paged list; want some")
	}
}

// errGet answers every Get with ErrTooLarge, which a MostRecent read
// never legitimately gets.
type errGet struct{ storage.Interface }

func (errGet) Get(_ context.Context, key string, _ storage.GetOptions) (storage.Object, error) {
	return storage.Object{}, storage.NewError(storage.ErrTooLarge, key, "")
}

func TestLinearizableUnexpectedError(t *testing.T) {
	_, err := CheckLinearizable(t.Context(), errGet{newMemory(t)}, LinearizableOptions{Ops: 1000})
	if !errors.Is(err, storage.ErrTooLarge) {
		t.Fatalf("got error %v; want one wrapping ErrTooLarge", err)
	}
}

func TestLinearizableOptions(t *testing.T) {
	for _, o := range []LinearizableOptions{{Keys: maxKeys + 1}, {Clients: -1}, {Ops: -1}} {
		if _, err := CheckLinearizable(t.Context(), newMemory(t), o); err == nil {
			t.Errorf("options %+v: got no error; want one", o)
		}
	}
	t.Setenv(OpsEnv, "lots")
	if _, err := CheckLinearizable(t.Context(), newMemory(t), LinearizableOptions{}); err == nil {
		t.Errorf("$%s=lots: got no error; want one", OpsEnv)
	}
}

// The model, one sequential step at a time.

func TestModelStep(t *testing.T) {
	base := linState{known: true, rev: 5}
	base.keys[0] = slot{true, "a", 3}
	list := func(rev uint64, s ...slot) linOutput {
		var items [maxKeys]slot
		copy(items[:], s)
		return linOutput{rev: rev, items: &items}
	}
	ok := func(v string, rev uint64) linOutput { return linOutput{value: v, rev: rev} }
	fail := func(o outcome) linOutput { return linOutput{res: o} }
	type move struct {
		in  linInput
		out linOutput
	}
	tests := []struct {
		name  string
		steps []move
		legal int // how many steps, from base, the model accepts
	}{
		{"CreateTakesNextRevision", []move{{linInput{kind: opCreate, key: 1, value: "b"}, ok("b", 6)}, {linInput{kind: opGet, key: 1}, ok("b", 6)}}, 2},
		{"CreateSkipsRevision", []move{{linInput{kind: opCreate, key: 1, value: "b"}, ok("b", 7)}}, 0},
		{"CreateExisting", []move{{linInput{kind: opCreate, key: 0, value: "b"}, fail(exists)}, {linInput{kind: opCreate, key: 0, value: "b"}, ok("b", 6)}}, 1},
		{"GetOverwritten", []move{{linInput{kind: opUpdate, key: 0, value: "b"}, ok("b", 6)}, {linInput{kind: opGet, key: 0}, ok("a", 3)}}, 1},
		{"GetAbsent", []move{{linInput{kind: opGet, key: 1}, fail(notFound)}, {linInput{kind: opGet, key: 0}, fail(notFound)}}, 1},
		{"CASConflict", []move{{linInput{kind: opCAS, key: 0, value: "b", rev: 2}, fail(conflict)}, {linInput{kind: opCAS, key: 0, value: "b", rev: 3}, fail(conflict)}}, 1},
		{"CASMatches", []move{{linInput{kind: opCAS, key: 0, value: "b", rev: 3}, ok("b", 6)}, {linInput{kind: opCAS, key: 0, value: "c", rev: 3}, ok("c", 7)}}, 1},
		{"CASAbsent", []move{{linInput{kind: opCAS, key: 1, value: "b", rev: 3}, fail(notFound)}, {linInput{kind: opCAS, key: 1, value: "b", rev: 3}, fail(conflict)}}, 1},
		{"UpdateNoOpKeepsRevision", []move{{linInput{kind: opUpdate, key: 0, value: "a"}, ok("a", 3)}, {linInput{kind: opRevision}, linOutput{rev: 5}}}, 2},
		{"UpdateWrongValue", []move{{linInput{kind: opUpdate, key: 0, value: "b"}, ok("c", 6)}}, 0},
		{"DeleteReturnsLastState", []move{{linInput{kind: opDelete, key: 0}, ok("a", 6)}, {linInput{kind: opList}, list(6)}, {linInput{kind: opCreate, key: 0, value: "b"}, ok("b", 7)}}, 3},
		{"DeleteWrongLastState", []move{{linInput{kind: opDelete, key: 0}, ok("b", 6)}}, 0},
		{"DeleteAtLastStateRevision", []move{{linInput{kind: opDelete, key: 0}, ok("a", 3)}}, 0},
		{"DeletePrecondition", []move{{linInput{kind: opDelete, key: 0, rev: 2}, fail(conflict)}, {linInput{kind: opDelete, key: 0, rev: 2}, ok("a", 6)}}, 1},
		{"ListState", []move{{linInput{kind: opList}, list(5, slot{true, "a", 3})}, {linInput{kind: opList}, list(4, slot{true, "a", 3})}}, 1},
		{"ListMissesKey", []move{{linInput{kind: opList}, list(5)}}, 0},
		{"Revision", []move{{linInput{kind: opRevision}, linOutput{rev: 5}}, {linInput{kind: opRevision}, linOutput{rev: 6}}}, 1},
		{"Malformed", []move{{linInput{kind: opGet, key: 0}, linOutput{value: "a", rev: 3, bad: "an object of key x"}}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, legal := base, 0
			for _, s := range tt.steps {
				ok, next := step(st, s.in, s.out)
				if !ok {
					break
				}
				st, legal = next, legal+1
			}
			if legal != tt.legal {
				t.Errorf("got %d legal steps; want %d", legal, tt.legal)
			}
		})
	}
}

// The model under porcupine: real-time order decides.

func TestModelHistories(t *testing.T) {
	keys := []string{"k0"}
	seed := &linState{known: true, rev: 5}
	seed.keys[0] = slot{true, "a", 3}
	op := func(c int, call, ret int64, in linInput, out linOutput) porcupine.Operation {
		return porcupine.Operation{ClientId: c, Input: in, Call: call, Output: out, Return: ret}
	}
	start := op(0, 0, 1, linInput{kind: opSeed, seed: seed}, linOutput{})
	update := linInput{kind: opUpdate, key: 0, value: "b"}
	get := linInput{kind: opGet, key: 0}
	tests := []struct {
		name string
		ops  []porcupine.Operation
		want bool
	}{
		{"ReadDuringWriteSeesOld", []porcupine.Operation{start, op(0, 10, 20, update, linOutput{value: "b", rev: 6}), op(1, 15, 25, get, linOutput{value: "a", rev: 3})}, true},
		{"ReadDuringWriteSeesNew", []porcupine.Operation{start, op(0, 10, 20, update, linOutput{value: "b", rev: 6}), op(1, 15, 25, get, linOutput{value: "b", rev: 6})}, true},
		{"ReadAfterWriteSeesOld", []porcupine.Operation{start, op(0, 10, 20, update, linOutput{value: "b", rev: 6}), op(1, 21, 25, get, linOutput{value: "a", rev: 3})}, false},
		{"ReadsGoBack", []porcupine.Operation{start, op(0, 10, 40, update, linOutput{value: "b", rev: 6}), op(1, 11, 12, get, linOutput{value: "b", rev: 6}), op(1, 13, 14, get, linOutput{value: "a", rev: 3})}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := porcupine.CheckOperations(model(keys), tt.ops); got != tt.want {
				t.Errorf("got linearizable %v; want %v", got, tt.want)
			}
		})
	}
}
