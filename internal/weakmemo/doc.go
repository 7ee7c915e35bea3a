// Package weakmemo memoizes a function of a pointer for as long as the
// pointer's referent lives: one result per process for data every user
// builds from the same immutable input (package builtin's schemas, the
// same in every Registry of a process), forgotten when the input is
// collected (a CRD's schema, replaced on every update of the CRD).
//
// The results are shared by every caller: they must be immutable. A
// result that holds its key strongly keeps it alive, and its entry with
// it.
package weakmemo
