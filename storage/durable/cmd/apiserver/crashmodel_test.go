package main

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

// TestCrashModel: the crash test's model accepts what a durable store
// may do across a kill and refuses what it must not (a lost
// acknowledged write, a revision going back, an object nobody wrote).
func TestCrashModel(t *testing.T) {
	type op struct {
		call, ret int64 // ret 0: cut by a kill
		in        crashIn
		out       crashOut
	}
	live := func(v string, rev uint64) crashSlot { return crashSlot{true, v, rev} }
	tests := []struct {
		name string
		ops  []op
		want bool
	}{
		{"acknowledged create read back", []op{
			{1, 2, crashIn{kind: cCreate, key: 0, value: "a"}, crashOut{res: rOK, rev: 5}},
			{3, 4, crashIn{kind: cGet, key: 0}, crashOut{res: rOK, value: "a", rev: 5}},
		}, true},
		{"acknowledged create lost", []op{
			{1, 2, crashIn{kind: cCreate, key: 0, value: "a"}, crashOut{res: rOK, rev: 5}},
			{3, 4, crashIn{kind: cGet, key: 0}, crashOut{res: rNotFound}},
		}, false},
		{"acknowledged update lost", []op{
			{1, 2, crashIn{kind: cCreate, key: 0, value: "a"}, crashOut{res: rOK, rev: 5}},
			{3, 4, crashIn{kind: cUpdate, key: 0, value: "b", rev: 5}, crashOut{res: rOK, rev: 6}},
			{5, 6, crashIn{kind: cGet, key: 0}, crashOut{res: rOK, value: "a", rev: 5}},
		}, false},
		{"cut create absent", []op{
			{1, 0, crashIn{kind: cCreate, key: 0, value: "a"}, crashOut{res: rUnknown}},
			{3, 4, crashIn{kind: cGet, key: 0}, crashOut{res: rNotFound}},
		}, true},
		{"cut create present", []op{
			{1, 0, crashIn{kind: cCreate, key: 0, value: "a"}, crashOut{res: rUnknown}},
			{3, 4, crashIn{kind: cGet, key: 0}, crashOut{res: rOK, value: "a", rev: 9}},
		}, true},
		{"cut update half there (old value, new revision)", []op{
			{1, 2, crashIn{kind: cCreate, key: 0, value: "a"}, crashOut{res: rOK, rev: 5}},
			{3, 0, crashIn{kind: cUpdate, key: 0, value: "b", rev: 5}, crashOut{res: rUnknown}},
			{5, 6, crashIn{kind: cGet, key: 0}, crashOut{res: rOK, value: "a", rev: 6}},
		}, false},
		{"revision goes back after a restart", []op{
			{1, 2, crashIn{kind: cCreate, key: 0, value: "a"}, crashOut{res: rOK, rev: 5}},
			{3, 4, crashIn{kind: cDelete, key: 0}, crashOut{res: rOK}},
			{5, 6, crashIn{kind: cCreate, key: 0, value: "b"}, crashOut{res: rOK, rev: 4}},
		}, false},
		{"revision goes back on another key", []op{
			{1, 2, crashIn{kind: cCreate, key: 0, value: "a"}, crashOut{res: rOK, rev: 5}},
			{3, 4, crashIn{kind: cCreate, key: 1, value: "b"}, crashOut{res: rOK, rev: 4}},
		}, false},
		{"concurrent writes in either order", []op{
			{1, 4, crashIn{kind: cCreate, key: 0, value: "a"}, crashOut{res: rOK, rev: 5}},
			{2, 3, crashIn{kind: cCreate, key: 1, value: "b"}, crashOut{res: rOK, rev: 4}},
		}, true},
		{"list with an object nobody wrote", []op{
			{1, 2, crashIn{kind: cCreate, key: 0, value: "a"}, crashOut{res: rOK, rev: 5}},
			{3, 4, crashIn{kind: cList}, crashOut{res: rOK, items: [crashKeys]crashSlot{live("a", 5), live("x", 3)}}},
		}, false},
		{"failed list", []op{
			{1, 2, crashIn{kind: cList}, crashOut{res: rBad}},
		}, false},
		{"list of what was written", []op{
			{1, 2, crashIn{kind: cCreate, key: 0, value: "a"}, crashOut{res: rOK, rev: 5}},
			{3, 4, crashIn{kind: cList}, crashOut{res: rOK, items: [crashKeys]crashSlot{live("a", 5)}}},
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ops []porcupine.Operation
			for i, o := range tt.ops {
				ret := o.ret
				if ret == 0 {
					ret = 1 << 62
				}
				ops = append(ops, porcupine.Operation{ClientId: i, Input: o.in, Call: o.call, Output: o.out, Return: ret})
			}
			got := porcupine.CheckOperations(crashModel.ToModel(), ops) && revisionsIncrease(ops) == nil
			if got != tt.want {
				t.Fatalf("linearizable: %v; want %v", got, tt.want)
			}
		})
	}
}
