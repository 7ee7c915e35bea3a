package patch

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/merge"
)

// ErrConflict is the class of a server-side apply conflict: HTTP 409 with
// reason Conflict. Every such error is a [*ConflictError].
var ErrConflict = errors.New("patch: apply conflict")

// CauseTypeFieldManagerConflict is the StatusCause type of each conflict.
const CauseTypeFieldManagerConflict = "FieldManagerConflict"

// Conflict is one field an apply would take from another manager.
type Conflict struct {
	Manager     string // the other manager's name
	Operation   string // its entry's operation: Apply or Update
	APIVersion  string // its apiVersion (Update entries only)
	Subresource string
	// Field is the field's path as kube prints it: ".data.a",
	// `.spec.ports[port=80,protocol="TCP"]`, `.metadata.finalizers[="x"]`.
	Field string
}

// Message is the conflict's StatusCause message, as kube writes it:
// `conflict with "kubectl" using v1` (Update entries name their
// apiVersion; a subresource adds ` with subresource "status"`).
func (c Conflict) Message() string {
	return "conflict with " + c.managerString()
}

func (c Conflict) managerString() string {
	s := fmt.Sprintf("%q", c.Manager)
	if c.Subresource != "" {
		s += fmt.Sprintf(" with subresource %q", c.Subresource)
	}
	if c.Operation == OperationUpdate {
		s += " using " + c.APIVersion
	}
	return s
}

// ConflictError is the error of an apply that conflicts with other
// managers. The registry answers it as kube-apiserver does:
//
//	{"kind":"Status","apiVersion":"v1","status":"Failure","code":409,
//	 "reason":"Conflict","message":Error(),
//	 "details":{"causes":[{"reason":"FieldManagerConflict",
//	   "message":c.Message(),"field":c.Field}, ...]}}
//
// (a cause's type is serialized as "reason"). Conflicts are sorted by
// manager, then field.
type ConflictError struct {
	Conflicts []Conflict
	ids       []string // manager identifiers, parallel to Conflicts
}

// Error is kube's message, e.g. `Apply failed with 1 conflict: conflict
// with "kubectl-client-side-apply" using v1: .data.a`, or for several:
// "Apply failed with 2 conflicts: conflicts with \"a\":\n- .x\nconflicts
// with \"b\" using v1:\n- .y" (grouped by sorted manager identifier).
func (e *ConflictError) Error() string {
	if len(e.Conflicts) == 1 {
		c := e.Conflicts[0]
		return fmt.Sprintf("Apply failed with 1 conflict: conflict with %s: %s", c.managerString(), c.Field)
	}
	byID := map[string][]int{}
	var ids []string
	for i, id := range e.ids {
		if _, ok := byID[id]; !ok {
			ids = append(ids, id)
		}
		byID[id] = append(byID[id], i)
	}
	sort.Strings(ids)
	var msgs []string
	for _, id := range ids {
		idx := byID[id]
		msgs = append(msgs, fmt.Sprintf("conflicts with %s:", e.Conflicts[idx[0]].managerString()))
		for _, i := range idx {
			msgs = append(msgs, "- "+e.Conflicts[i].Field)
		}
	}
	return fmt.Sprintf("Apply failed with %d conflicts: %s", len(e.Conflicts), strings.Join(msgs, "\n"))
}

// Unwrap returns ErrConflict.
func (e *ConflictError) Unwrap() error { return ErrConflict }

func newConflictError(cs merge.Conflicts) *ConflictError {
	cs = append(merge.Conflicts(nil), cs...)
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].Manager != cs[j].Manager {
			return cs[i].Manager < cs[j].Manager
		}
		return cs[i].Path.Compare(cs[j].Path) < 0
	})
	e := &ConflictError{}
	for _, c := range cs {
		k, ok := parseManagerID(c.Manager)
		if !ok {
			k = managerKey{Manager: c.Manager}
		}
		e.Conflicts = append(e.Conflicts, Conflict{
			Manager: k.Manager, Operation: k.Operation, APIVersion: k.APIVersion,
			Subresource: k.Subresource, Field: c.Path.String(),
		})
		e.ids = append(e.ids, c.Manager)
	}
	return e
}
