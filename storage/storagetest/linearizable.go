package storagetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/kapi-dev/kapi/storage"
)

// DefaultLinearizableOps is the length of the history Run checks, unless
// $KAPI_LINEARIZABILITY_OPS says otherwise (`make stress` asks for more).
const DefaultLinearizableOps = 10000

// OpsEnv names the environment variable that overrides the default count.
const OpsEnv = "KAPI_LINEARIZABILITY_OPS"

// LinearizableOptions tune CheckLinearizable; zero fields take defaults.
type LinearizableOptions struct {
	// Ops is about how many operations to record (whole rounds are run).
	// 0: $KAPI_LINEARIZABILITY_OPS if set, else DefaultLinearizableOps.
	Ops int
	// Clients is the number of concurrent clients (default 8).
	Clients int
	// Keys is the number of keys written under one prefix (1 to 8,
	// default 4): few keys, so that clients collide.
	Keys int
	// Round is the number of operations between two quiescent points
	// (default 1024); see CheckLinearizable.
	Round int
	// CallTimeout bounds each storage call (default 10s).
	CallTimeout time.Duration
	// CheckTimeout bounds the checker (default 2m); past it the report
	// says TimedOut, and the history is neither passed nor failed.
	CheckTimeout time.Duration
	// Seed seeds the choice of operations (0: a random seed, reported).
	Seed uint64
	// HTML, when set, is a file the checker writes porcupine's
	// visualization of the first failing round to.
	HTML string
}

// LinearizableReport is what CheckLinearizable found.
type LinearizableReport struct {
	Ops, Rounds  int
	Seed         uint64
	Linearizable bool
	TimedOut     bool // the checker gave up: the result is unknown
	// Failure describes the first round that does not linearize: the
	// state after its longest linearizable prefix and the operations,
	// none of which can come next.
	Failure string
	// Outcomes counts operations by kind and outcome ("cas ErrConflict").
	Outcomes       map[string]int
	Record, Checks time.Duration
}

func (r LinearizableReport) String() string {
	keys := slices.Sorted(maps.Keys(r.Outcomes))
	var b strings.Builder
	fmt.Fprintf(&b, "%d operations in %d rounds (seed %d): recorded in %v, checked in %v; outcomes:",
		r.Ops, r.Rounds, r.Seed, r.Record.Round(time.Millisecond), r.Checks.Round(time.Millisecond))
	for _, k := range keys {
		fmt.Fprintf(&b, " %s %d,", k, r.Outcomes[k])
	}
	return strings.TrimSuffix(b.String(), ",")
}

var linearizableTests = []test{
	{"Mixed", func(t *testing.T, s storage.Interface) { checkLinearizable(t, s, LinearizableOptions{}) }},
}

// RunLinearizable checks a fresh store from newStore as CheckLinearizable
// does and fails t when the history does not linearize. Run calls it with
// the default options; a backend may call it again for a longer run.
// $KAPI_LINEARIZABILITY_HTML, when opts.HTML is empty, names the file for
// the visualization of a failure.
func RunLinearizable(t *testing.T, newStore func(t *testing.T) storage.Interface, opts LinearizableOptions) {
	t.Helper()
	checkLinearizable(t, newStore(t), opts)
}

func checkLinearizable(t *testing.T, s storage.Interface, opts LinearizableOptions) {
	t.Helper()
	if opts.HTML == "" {
		opts.HTML = os.Getenv("KAPI_LINEARIZABILITY_HTML")
	}
	r, err := CheckLinearizable(t.Context(), s, opts)
	if err != nil {
		t.Fatalf("linearizability check: %v", err)
	}
	t.Log(r)
	switch {
	case r.TimedOut:
		t.Fatalf("the linearizability checker gave up after %v; want a verdict", r.Checks)
	case !r.Linearizable:
		t.Fatalf("history not linearizable (seed %d):\n%s", r.Seed, r.Failure)
	}
}

// CheckLinearizable records a history of concurrent clients using s and
// checks it against a versioned key-value model (see linmodel.go) with
// porcupine. s must be fresh: nothing else may write to it meanwhile,
// since the model expects each write to take exactly the next revision.
//
// Clients pick at random among create, get, unconditional update, update
// with a revision precondition taken from what they last saw of the key,
// delete (half with such a precondition), list of the prefix (half paged)
// and Revision. Reads are MostRecent, so a correct store never answers
// ErrTooLarge or ErrExpired; the only errors expected are ErrExists,
// ErrNotFound and ErrConflict where the operation allows them, and
// ErrExpired on the continuation of a paged list (the store may compact
// between pages; the list starts over, up to ten times). Any other
// error, including a call outliving CallTimeout, ends the check with that
// error: an unknown outcome of a write would make the model guess, and a
// healthy backend answers well within the timeout.
//
// Checking a long history as one is quadratic in its length, so the
// clients work in rounds: after each round they all stop, and one List
// (the round's boundary) reads the whole state at a quiescent point. Each
// round is checked alone, starting from the previous boundary's answer
// and ending with its own boundary, which the model holds to its state
// like any list; the rounds of a history all linearize exactly when the
// whole history does, since each boundary pins the state between rounds.
func CheckLinearizable(ctx context.Context, s storage.Interface, opts LinearizableOptions) (LinearizableReport, error) {
	if err := opts.defaults(); err != nil {
		return LinearizableReport{}, err
	}
	h := &history{s: s, opts: opts, start: time.Now(), known: make([][]uint64, opts.Clients)}
	for i := range opts.Keys {
		h.keys = append(h.keys, fmt.Sprintf("%sk%d", linPrefix, i))
	}
	for c := range h.known {
		h.known[c] = make([]uint64, opts.Keys)
	}
	rep := LinearizableReport{Seed: opts.Seed, Outcomes: map[string]int{}, Linearizable: true}
	var err error
	if h.last, err = h.boundary(ctx); err != nil {
		return LinearizableReport{}, err
	}
	// Rounds are checked in batches, recording paused, so that memory
	// stays bounded however long the history and checking never competes
	// with the clients for CPU.
	var batch [][]porcupine.Operation
	for rep.Ops < opts.Ops && rep.Linearizable {
		start := time.Now()
		r, err := h.round(ctx, &rep)
		rep.Record += time.Since(start)
		if err != nil {
			rep.Linearizable = false // no verdict
			return rep, err
		}
		batch = append(batch, r)
		if len(batch) == checkBatch || rep.Ops >= opts.Ops {
			start := time.Now()
			h.check(batch, rep.Rounds-len(batch), opts.CheckTimeout-rep.Checks, &rep)
			rep.Checks += time.Since(start)
			batch = nil
		}
	}
	return rep, nil
}

// checkBatch is the number of rounds checked at once.
const checkBatch = 32

const linPrefix = "/g/lin/ns/"

func (o *LinearizableOptions) defaults() error {
	if o.Ops == 0 {
		o.Ops = DefaultLinearizableOps
		if v := os.Getenv(OpsEnv); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return fmt.Errorf("$%s=%q: want a positive number of operations", OpsEnv, v)
			}
			o.Ops = n
		}
	}
	if o.Keys > maxKeys || o.Keys < 0 || o.Ops < 0 || o.Clients < 0 || o.Round < 0 {
		return fmt.Errorf("options %+v: want Keys at most %d and no negative counts", *o, maxKeys)
	}
	for _, d := range []struct {
		p *int
		v int
	}{{&o.Clients, 8}, {&o.Keys, 4}, {&o.Round, 1024}} {
		if *d.p == 0 {
			*d.p = d.v
		}
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = 10 * time.Second
	}
	if o.CheckTimeout == 0 {
		o.CheckTimeout = 2 * time.Minute
	}
	if o.Seed == 0 {
		o.Seed = rand.Uint64() | 1
	}
	return nil
}

type history struct {
	s     storage.Interface
	opts  LinearizableOptions
	keys  []string
	start time.Time
	// known is what each client last saw of each key's revision: where
	// its preconditions come from.
	known [][]uint64
	last  porcupine.Operation // the boundary of the last round
}

func (h *history) now() int64 { return int64(time.Since(h.start)) }

// round records one round: a seed (the state the last boundary read),
// the clients' operations, and a new boundary.
func (h *history) round(ctx context.Context, rep *LinearizableReport) ([]porcupine.Operation, error) {
	o := h.opts
	last := h.last.Output.(linOutput)
	seed := h.last
	seed.Input = linInput{kind: opSeed, seed: &linState{known: true, rev: last.rev, keys: *last.items}}
	seed.Output = linOutput{}
	n := rep.Rounds
	each := (o.Round + o.Clients - 1) / o.Clients
	ops := make([][]porcupine.Operation, o.Clients)
	errs := make([]error, o.Clients)
	var wg sync.WaitGroup
	for c := range o.Clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(o.Seed, uint64(n*o.Clients+c)))
			for i := range each {
				op, err := h.do(ctx, rng, c, fmt.Sprintf("c%d-%d-%d", c, n, i))
				if err != nil {
					errs[c] = err
					return
				}
				ops[c] = append(ops[c], op)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var err error
	if h.last, err = h.boundary(ctx); err != nil {
		return nil, err
	}
	round := []porcupine.Operation{seed}
	for _, l := range ops {
		round = append(round, l...)
	}
	round = append(round, h.last)
	for _, op := range round[1 : len(round)-1] {
		rep.Outcomes[op.Input.(linInput).kind.String()+" "+op.Output.(linOutput).res.String()]++
	}
	rep.Ops += len(round) - 2
	rep.Rounds++
	return round, nil
}

// boundary lists the prefix at a quiescent point, as the coordinator
// (client id Clients).
func (h *history) boundary(ctx context.Context) (porcupine.Operation, error) {
	in := linInput{kind: opList}
	call := h.now()
	out, err := h.call(ctx, in)
	if err != nil {
		return porcupine.Operation{}, err
	}
	return porcupine.Operation{ClientId: h.opts.Clients, Input: in, Call: call, Output: out, Return: h.now()}, nil
}

// do picks and runs one operation for client c.
func (h *history) do(ctx context.Context, rng *rand.Rand, c int, value string) (porcupine.Operation, error) {
	known := h.known[c]
	in := linInput{key: rng.IntN(len(h.keys)), value: value}
	switch p := rng.IntN(100); {
	case p < 14:
		in.kind = opCreate
	case p < 34:
		in.kind = opGet
	case p < 49:
		in.kind = opUpdate
	case p < 69:
		in.kind = opCAS
		in.rev = max(known[in.key], 1)
	case p < 76:
		in.kind = opDelete
		if rng.IntN(2) == 0 {
			in.rev = max(known[in.key], 1)
		}
	case p < 96:
		in.kind = opList
		if rng.IntN(2) == 0 {
			in.limit = 1 + rng.Int64N(int64(len(h.keys)))
		}
	default:
		in.kind = opRevision
	}
	call := h.now()
	out, err := h.call(ctx, in)
	if err != nil {
		return porcupine.Operation{}, err
	}
	ret := h.now()
	if out.res == okay && out.bad == "" {
		switch in.kind {
		case opList:
			for i, s := range out.items[:len(known)] {
				known[i] = s.rev
			}
		case opRevision:
		default:
			known[in.key] = out.rev
		}
	}
	return porcupine.Operation{ClientId: c, Input: in, Call: call, Output: out, Return: ret}, nil
}

// call makes the storage call in asks for and turns its answer into an
// output; errors other than the expected sentinels are returned.
func (h *history) call(ctx context.Context, in linInput) (linOutput, error) {
	ctx, cancel := context.WithTimeout(ctx, h.opts.CallTimeout)
	defer cancel()
	if in.kind == opList {
		// A continuation may legitimately expire, if the store compacted
		// the first page's revision meanwhile: the list starts over, as
		// the same operation (its interval only grows, which can hide a
		// bug but never invents one).
		for try := 1; ; try++ {
			out, err := h.list(ctx, in.limit)
			if try == 10 || !errors.Is(err, errExpiredPage) {
				return out, err
			}
		}
	}
	if in.kind == opRevision {
		r, err := h.s.Revision(ctx)
		if err != nil {
			return linOutput{}, fmt.Errorf("revision: %w", err)
		}
		return linOutput{rev: r}, nil
	}
	key := h.keys[in.key]
	write := func(cur storage.Object) (storage.Object, error) {
		n := obj(key, in.value)
		n.UID = cur.UID
		return n, nil
	}
	var o storage.Object
	var err error
	var allowed []error
	switch in.kind {
	case opCreate:
		o, err = h.s.Create(ctx, obj(key, in.value))
		allowed = []error{storage.ErrExists}
	case opGet:
		o, err = h.s.Get(ctx, key, storage.GetOptions{})
		allowed = []error{storage.ErrNotFound}
	case opUpdate:
		o, err = h.s.GuaranteedUpdate(ctx, key, storage.UpdateOptions{}, write)
		allowed = []error{storage.ErrNotFound}
	case opCAS:
		o, err = h.s.GuaranteedUpdate(ctx, key, storage.UpdateOptions{Preconditions: storage.Preconditions{Revision: in.rev}}, write)
		allowed = []error{storage.ErrNotFound, storage.ErrConflict}
	case opDelete:
		o, err = h.s.Delete(ctx, key, storage.DeleteOptions{Preconditions: storage.Preconditions{Revision: in.rev}})
		allowed = []error{storage.ErrNotFound}
		if in.rev != 0 {
			allowed = append(allowed, storage.ErrConflict)
		}
	}
	if err != nil {
		for _, e := range allowed {
			if errors.Is(err, e) {
				return linOutput{res: outcomeOf(e)}, nil
			}
		}
		return linOutput{}, fmt.Errorf("%s: %w", describeOp(h.keys, in, linOutput{bad: "error"}), err)
	}
	out := linOutput{value: string(o.Value), rev: o.Revision}
	if o.Key != key {
		out.bad = fmt.Sprintf("an object of key %q", o.Key)
	}
	return out, nil
}

func outcomeOf(sentinel error) outcome {
	switch sentinel {
	case storage.ErrExists:
		return exists
	case storage.ErrNotFound:
		return notFound
	}
	return conflict
}

var errExpiredPage = errors.New("continuation expired")

// list reads the whole prefix, in pages of limit when limit > 0; the
// pages together are one operation, a snapshot at the first page's
// revision.
func (h *history) list(ctx context.Context, limit int64) (linOutput, error) {
	items := new([maxKeys]slot)
	out := linOutput{items: items}
	last := -1
	opts := storage.ListOptions{Limit: limit}
	for page := 0; ; page++ {
		r, err := h.s.List(ctx, linPrefix, opts)
		if err != nil {
			if page > 0 && errors.Is(err, storage.ErrExpired) {
				err = fmt.Errorf("%w: %w", errExpiredPage, err)
			}
			return linOutput{}, fmt.Errorf("List(%s, %+v), page %d: %w", linPrefix, opts, page+1, err)
		}
		switch {
		case page == 0:
			out.rev = r.Revision
		case r.Revision != out.rev && out.bad == "":
			out.bad = fmt.Sprintf("page %d at revision %d, the first at %d", page+1, r.Revision, out.rev)
		}
		if limit > 0 && int64(len(r.Items)) > limit && out.bad == "" {
			out.bad = fmt.Sprintf("page %d has %d items; limit %d", page+1, len(r.Items), limit)
		}
		for _, o := range r.Items {
			i := slices.Index(h.keys, o.Key)
			switch {
			case out.bad != "":
			case i < 0:
				out.bad = fmt.Sprintf("foreign key %q", o.Key)
			case i <= last:
				out.bad = fmt.Sprintf("%q after %q: not in key order", o.Key, h.keys[last])
			default:
				items[i] = slot{true, string(o.Value), o.Revision}
				last = i
			}
		}
		if r.Continue == "" {
			return out, nil
		}
		if limit == 0 && out.bad == "" {
			out.bad = "a continue token without a limit"
		}
		if page > maxKeys {
			out.bad = "more pages than keys"
			return out, nil
		}
		opts.Continue = r.Continue
	}
}

// check checks a batch of rounds (the first numbered first), GOMAXPROCS
// at a time, within timeout, and describes the first that fails.
func (h *history) check(rounds [][]porcupine.Operation, first int, timeout time.Duration, rep *LinearizableReport) {
	m := model(h.keys)
	results := make([]porcupine.CheckResult, len(rounds))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				left := time.Until(deadline(ctx))
				if left <= 0 {
					results[i] = porcupine.Unknown
					continue
				}
				results[i] = porcupine.CheckOperationsTimeout(m, rounds[i], left)
				if results[i] == porcupine.Illegal {
					cancel() // one failure is the verdict
				}
			}
		})
	}
	for i := range rounds {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, r := range results {
		switch r {
		case porcupine.Illegal:
			rep.Linearizable, rep.TimedOut = false, false
			rep.Failure = h.explain(m, first+i, rounds[i])
			return
		case porcupine.Unknown:
			rep.Linearizable, rep.TimedOut = false, true
		}
	}
}

func deadline(ctx context.Context) time.Time {
	if ctx.Err() != nil {
		return time.Time{}
	}
	d, _ := ctx.Deadline()
	return d
}

// explain describes why round n does not linearize: after the longest
// linearizable prefix the checker found, the state and the operations
// that could come next (called before any of the rest returned), none of
// which the state allows.
func (h *history) explain(m porcupine.Model, n int, round []porcupine.Operation) string {
	_, info := porcupine.CheckOperationsVerbose(m, round, h.opts.CheckTimeout)
	var best []int
	for _, part := range info.PartialLinearizations() {
		for _, l := range part {
			if len(l) > len(best) {
				best = l
			}
		}
	}
	st := m.Init()
	done := make([]bool, len(round))
	for _, id := range best {
		_, st = m.Step(st, round[id].Input, round[id].Output)
		done[id] = true
	}
	var b strings.Builder
	fmt.Fprintf(&b, "round %d (%d operations): after %d of them linearize, the state is %s; none of these can come next:\n",
		n+1, len(round)-2, len(best), m.DescribeState(st))
	firstReturn := int64(1<<63 - 1)
	for i, op := range round {
		if !done[i] {
			firstReturn = min(firstReturn, op.Return)
		}
	}
	for i, op := range round {
		if !done[i] && op.Call <= firstReturn {
			fmt.Fprintf(&b, "  client %d [%d, %d]: %s\n", op.ClientId, op.Call, op.Return, m.DescribeOperation(op.Input, op.Output))
		}
	}
	if from := len(best) - 5; len(best) > 0 {
		b.WriteString("  (the last operations linearized:")
		for _, id := range best[max(from, 0):] {
			fmt.Fprintf(&b, " %s;", m.DescribeOperation(round[id].Input, round[id].Output))
		}
		b.WriteString(")\n")
	}
	if h.opts.HTML != "" {
		if err := porcupine.VisualizePath(m, info, h.opts.HTML); err != nil {
			fmt.Fprintf(&b, "  (visualization: %v)\n", err)
		} else {
			fmt.Fprintf(&b, "  (visualization: %s)\n", h.opts.HTML)
		}
	}
	return b.String()
}
