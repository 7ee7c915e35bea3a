package weakmemo_test

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/kapi-dev/kapi/internal/weakmemo"
)

type schema struct{ name string }

func TestGet(t *testing.T) {
	a, b := &schema{"a"}, &schema{"a"} // equal content, two pointers
	fail := errors.New("no")
	tests := []struct {
		name      string
		keys      []*schema
		err       error
		wantCalls int
		wantLen   int
	}{
		{"one pointer built once", []*schema{a, a, a}, nil, 1, 1},
		{"equal content, other pointer: built again", []*schema{a, b, a, b}, nil, 2, 2},
		{"errors are not memoized", []*schema{a, a}, fail, 2, 0},
		{"nil is not memoized", []*schema{nil, nil}, nil, 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m weakmemo.Memo[schema, string]
			calls := 0
			for _, k := range tt.keys {
				v, err := m.Get(k, func(k *schema) (string, error) {
					calls++
					if k == nil {
						return "nil", tt.err
					}
					return fmt.Sprintf("%s#%d", k.name, calls), tt.err
				})
				if err != tt.err {
					t.Fatalf("Get: err %v, want %v", err, tt.err)
				}
				if tt.err == nil && k != nil && v == "" {
					t.Fatal("Get: empty result")
				}
			}
			if calls != tt.wantCalls {
				t.Errorf("build called %d times, want %d", calls, tt.wantCalls)
			}
			if n := m.Len(); n != tt.wantLen {
				t.Errorf("Len() = %d, want %d", n, tt.wantLen)
			}
		})
	}
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
}

func TestGetSameResult(t *testing.T) {
	var m weakmemo.Memo[schema, *string]
	k := &schema{"k"}
	build := func(k *schema) (*string, error) { s := k.name; return &s, nil }
	v1, _ := m.Get(k, build)
	v2, _ := m.Get(k, build)
	if v1 != v2 {
		t.Fatal("two Gets of one key gave two results; want the memoized one")
	}
}

// TestForgottenWhenCollected: an entry goes with its key.
func TestForgottenWhenCollected(t *testing.T) {
	var m weakmemo.Memo[schema, string]
	func() {
		k := &schema{"short-lived"}
		if _, err := m.Get(k, func(k *schema) (string, error) { return k.name, nil }); err != nil {
			t.Fatal(err)
		}
	}()
	if m.Len() != 1 {
		t.Fatalf("Len() = %d after one Get, want 1", m.Len())
	}
	// Cleanups run on a goroutine of the runtime after a collection.
	for i := 0; i < 100 && m.Len() != 0; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if n := m.Len(); n != 0 {
		t.Fatalf("Len() = %d after the key was collected, want 0", n)
	}
}
