package storage_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kapi-dev/kapi/storage"
)

func TestMemoComputesOnce(t *testing.T) {
	var m storage.Memo
	var calls atomic.Int32
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := m.Do(storage.MemoKey{Rev: 1, What: 1}, func() (any, error) { calls.Add(1); return "bytes", nil })
			if v != "bytes" || err != nil {
				t.Errorf("Do = %v, %v; want bytes, nil", v, err)
			}
		}()
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("f ran %d times for one key; want 1", n)
	}
	if v, _ := m.Do(storage.MemoKey{Rev: 1, What: 2}, func() (any, error) { return "other", nil }); v != "other" {
		t.Errorf("second key = %v; want its own value", v)
	}
	if v, ok := m.Load(storage.MemoKey{Rev: 1, What: 1}); !ok || v != "bytes" {
		t.Errorf("Load = %v, %v; want the remembered value", v, ok)
	}
	if _, ok := m.Load(storage.MemoKey{Rev: 2, What: 1}); ok {
		t.Error("Load of a key never computed reports a value")
	}
}

func TestMemoRemembersErrors(t *testing.T) {
	var m storage.Memo
	boom := errors.New("boom")
	calls := 0
	for range 2 {
		if _, err := m.Do(storage.MemoKey{Rev: 1}, func() (any, error) { calls++; return nil, boom }); !errors.Is(err, boom) {
			t.Errorf("err = %v; want boom", err)
		}
	}
	if calls != 1 {
		t.Errorf("f ran %d times; want 1", calls)
	}
	if _, ok := m.Load(storage.MemoKey{Rev: 1}); ok {
		t.Error("Load reports a value for a key whose computation failed")
	}
}

func TestNilMemoComputesEveryTime(t *testing.T) {
	var m *storage.Memo
	calls := 0
	for range 3 {
		m.Do(storage.MemoKey{Rev: 1}, func() (any, error) { calls++; return nil, nil })
	}
	if calls != 3 {
		t.Errorf("f ran %d times on a nil Memo; want 3", calls)
	}
}
