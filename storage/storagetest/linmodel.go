package storagetest

import (
	"fmt"
	"strings"

	"github.com/anishathalye/porcupine"
)

// The sequential specification the linearizability check holds a backend
// to: a versioned key-value store over a few keys with one revision
// counter. Every successful write (create, update, delete) takes the
// revision after the current one, whichever key it touches; an object's
// revision is that of the write that produced it; reads see the current
// state. Worked example, from the state {rev 7, k0=a@5}:
//
//	create k1=b        → ok at 8               {rev 8, k0=a@5, k1=b@8}
//	CAS k0=c if rev 5  → ok at 9               {rev 9, k0=c@9, k1=b@8}
//	CAS k1=d if rev 5  → ErrConflict (k1 is @8; nothing changes)
//	delete k1          → ok, last state b@8    {rev 10, k0=c@9}
//	get k1             → ErrNotFound
//	list               → [k0=c@9] at 10
//
// A concurrent history is linearizable when its operations can be put in
// one order, consistent with real time (an operation that returned before
// another was called comes first), in which every answer is the one this
// specification gives.

// maxKeys bounds the keys of a check, so that a state is a small value
// that is copied, compared and hashed without allocating maps.
const maxKeys = 8

type opKind uint8

const (
	opSeed     opKind = iota // the state a round starts from (see check)
	opCreate                 // Create
	opGet                    // Get, MostRecent
	opUpdate                 // GuaranteedUpdate without preconditions
	opCAS                    // GuaranteedUpdate with Preconditions.Revision
	opDelete                 // Delete, with Preconditions.Revision when rev != 0
	opList                   // List of the whole prefix, MostRecent, maybe paged
	opRevision               // Revision
)

var opNames = [...]string{"seed", "create", "get", "update", "cas", "delete", "list", "revision"}

func (k opKind) String() string { return opNames[k] }

// outcome is how an operation ended: well, or with one of the sentinels
// its contract allows. Any other error stops the check (see check).
type outcome uint8

const (
	okay outcome = iota
	exists
	notFound
	conflict
)

var outcomeNames = [...]string{"ok", "ErrExists", "ErrNotFound", "ErrConflict"}

func (o outcome) String() string { return outcomeNames[o] }

// slot is one key in a state or a list answer.
type slot struct {
	live  bool
	value string
	rev   uint64 // the object's revision
}

// linState is a state of the specification: the store's revision and
// every key's current object. A zero linState (known false) is the
// unknown state a round starts in, before its seed.
type linState struct {
	known bool
	rev   uint64
	keys  [maxKeys]slot
}

type linInput struct {
	kind  opKind
	key   int    // index of the key, for single-key operations
	value string // what create and updates write
	rev   uint64 // the precondition of opCAS and opDelete (0: none)
	limit int64  // opList: the page size (0: one page)
	seed  *linState
}

type linOutput struct {
	res   outcome
	value string // the object's value: written, read, or deleted (its last state)
	rev   uint64 // the object's revision; for opList and opRevision the store's
	items *[maxKeys]slot
	// bad explains an answer no correct store gives, whatever the order:
	// an object of another key, a list out of key order. Such an operation
	// never linearizes.
	bad string
}

// step applies one operation to a state, reporting whether the answer is
// the specification's. States are values: the caller's is never changed.
func step(st linState, in linInput, out linOutput) (bool, linState) {
	if in.kind == opSeed {
		return !st.known, *in.seed
	}
	if !st.known || out.bad != "" {
		return false, st
	}
	if in.kind == opList {
		return out.res == okay && out.rev == st.rev && *out.items == st.keys, st
	}
	if in.kind == opRevision {
		return out.res == okay && out.rev == st.rev, st
	}
	cur := st.keys[in.key]
	if out.res == notFound {
		return !cur.live, st // every single-key operation may find the key absent
	}
	switch in.kind {
	case opCreate:
		switch out.res {
		case exists:
			return cur.live, st
		case okay:
			if cur.live || out.value != in.value || out.rev != st.rev+1 {
				return false, st
			}
			st.rev++
			st.keys[in.key] = slot{true, in.value, st.rev}
			return true, st
		}
	case opGet:
		return out.res == okay && cur.live && cur == slot{true, out.value, out.rev}, st
	case opUpdate, opCAS:
		checked := in.kind == opCAS
		switch out.res {
		case conflict:
			return checked && cur.live && cur.rev != in.rev, st
		case okay:
			if !cur.live || checked && cur.rev != in.rev || out.value != in.value {
				return false, st
			}
			if cur.value == in.value && out.rev == cur.rev {
				return true, st // a no-op update writes nothing
			}
			if out.rev != st.rev+1 {
				return false, st
			}
			st.rev++
			st.keys[in.key] = slot{true, in.value, st.rev}
			return true, st
		}
	case opDelete:
		switch out.res {
		case conflict:
			return in.rev != 0 && cur.live && cur.rev != in.rev, st
		case okay:
			// the last state's value at the delete's revision
			if !cur.live || in.rev != 0 && cur.rev != in.rev || cur.value != out.value || out.rev != st.rev+1 {
				return false, st
			}
			st.rev++
			st.keys[in.key] = slot{}
			return true, st
		}
	}
	return false, st
}

// model is the porcupine form of step. Histories are partitioned by the
// caller (one round each), so it has no Partition function.
func model(keys []string) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return linState{} },
		Step: func(st, in, out any) (bool, any) {
			return step(st.(linState), in.(linInput), out.(linOutput))
		},
		Equal: func(a, b any) bool { return a.(linState) == b.(linState) },
		Hash: func(st any) uint64 {
			s := st.(linState)
			h := s.rev
			for i, k := range s.keys {
				if k.live {
					h = h*31 + k.rev + uint64(i)
				}
			}
			return h
		},
		DescribeOperation: func(in, out any) string { return describeOp(keys, in.(linInput), out.(linOutput)) },
		DescribeState:     func(st any) string { return describeState(keys, st.(linState)) },
	}
}

func describeOp(keys []string, in linInput, out linOutput) string {
	var b strings.Builder
	switch in.kind {
	case opSeed:
		return "start from " + describeState(keys, *in.seed)
	case opList:
		b.WriteString("list")
		if in.limit > 0 {
			fmt.Fprintf(&b, " (pages of %d)", in.limit)
		}
	case opRevision:
		b.WriteString("revision")
	default:
		fmt.Fprintf(&b, "%s %s", in.kind, keys[in.key])
		if in.kind == opCreate || in.kind == opUpdate || in.kind == opCAS {
			fmt.Fprintf(&b, "=%s", in.value)
		}
		if in.rev != 0 {
			fmt.Fprintf(&b, " if rev %d", in.rev)
		}
	}
	b.WriteString(" → ")
	switch {
	case out.bad != "":
		b.WriteString("malformed: " + out.bad)
	case out.res != okay:
		b.WriteString(out.res.String())
	case in.kind == opList:
		fmt.Fprintf(&b, "%s at %d", describeSlots(keys, *out.items), out.rev)
	case in.kind == opRevision:
		fmt.Fprintf(&b, "%d", out.rev)
	default:
		fmt.Fprintf(&b, "%s@%d", out.value, out.rev)
	}
	return b.String()
}

func describeState(keys []string, st linState) string {
	if !st.known {
		return "{unknown}"
	}
	return fmt.Sprintf("{rev %d %s}", st.rev, describeSlots(keys, st.keys))
}

func describeSlots(keys []string, s [maxKeys]slot) string {
	var parts []string
	for i, k := range s {
		if k.live {
			parts = append(parts, fmt.Sprintf("%s=%s@%d", keys[i], k.value, k.rev))
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}
