package cbor

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"testing"

	fxcbor "github.com/fxamacker/cbor/v2"
)

func TestAppendList(t *testing.T) {
	item := func(name string) map[string]any {
		return map[string]any{"kind": "Widget", "apiVersion": "x.io/v1", "metadata": map[string]any{"name": name}, "n": json.Number("1.5")}
	}
	tests := []struct {
		name     string
		metadata map[string]any
		items    []map[string]any
		tagged   bool // items given as Marshal results
	}{
		{"empty", map[string]any{"resourceVersion": "7"}, nil, false},
		{"nil metadata", nil, []map[string]any{item("a")}, false},
		{"three", map[string]any{"resourceVersion": "7", "continue": "abc", "remainingItemCount": json.Number("4")}, []map[string]any{item("a"), item("b"), item("c")}, false},
		{"tagged items", map[string]any{}, []map[string]any{item("a"), item("b")}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var encoded [][]byte
			kubeItems := []any{}
			for _, it := range tt.items {
				var b []byte
				var err error
				if tt.tagged {
					b, err = Marshal(it)
				} else {
					b, err = AppendValue(nil, it)
				}
				if err != nil {
					t.Fatal(err)
				}
				encoded = append(encoded, b)
				kubeItems = append(kubeItems, it)
			}
			got, err := AppendList([]byte("prefix"), "WidgetList", "x.io/v1", tt.metadata, encoded)
			if err != nil {
				t.Fatal(err)
			}
			// kube sorts the UnstructuredList's keys as its map encoder sorts
			// a map's (collections.go), so a plain map is the oracle.
			meta := tt.metadata
			if meta == nil {
				meta = map[string]any{}
			}
			want, err := kubeEncode(map[string]any{"kind": "WidgetList", "apiVersion": "x.io/v1", "metadata": meta, "items": kubeItems})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != "prefix"+string(want) {
				t.Errorf("got %x; want prefix + %x", got, want)
			}
		})
	}
}

func TestAppendListLayout(t *testing.T) {
	got, err := AppendList(nil, "L", "v1", map[string]any{}, [][]byte{{0xa0}})
	if err != nil {
		t.Fatal(err)
	}
	want := "d9d9f7" + "a4" + "446b696e64" + "414c" + "456974656d73" + "81a0" + "486d65746164617461" + "a0" + "4a61706956657273696f6e" + "427631"
	if h := hex.EncodeToString(got); h != want {
		t.Errorf("got %s; want %s", h, want)
	}
}

func TestAppendListErrors(t *testing.T) {
	for name, call := range map[string]func() ([]byte, error){
		"empty item": func() ([]byte, error) { return AppendList([]byte("x"), "L", "v1", nil, [][]byte{{}}) },
		"bad metadata": func() ([]byte, error) {
			return AppendList([]byte("x"), "L", "v1", map[string]any{"a": struct{}{}}, nil)
		},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := call()
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("got %v; want ErrInvalid", err)
			}
			if string(got) != "x" {
				t.Errorf("got dst %q; want it unchanged", got)
			}
		})
	}
}

func TestAppendWatchEvent(t *testing.T) {
	obj := map[string]any{"kind": "Widget", "apiVersion": "x.io/v1", "metadata": map[string]any{"name": "a", "resourceVersion": "5"}}
	tagged, err := Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	bare := tagged[len(SelfDescribed):]
	// The event kube encodes: metav1.WatchEvent's fields, with
	// RawExtension.MarshalCBOR returning the tagged object verbatim.
	type watchEvent struct {
		Type   string            `json:"type"`
		Object fxcbor.RawMessage `json:"object"`
	}
	for _, typ := range []string{"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"} {
		body, err := kubeEnc.Marshal(watchEvent{Type: typ, Object: tagged})
		if err != nil {
			t.Fatal(err)
		}
		want := SelfDescribed + string(body)
		for name, object := range map[string][]byte{"tagged": tagged, "bare": bare} {
			t.Run(typ+"/"+name, func(t *testing.T) {
				got, err := AppendWatchEvent([]byte("prev"), typ, object)
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != "prev"+want {
					t.Errorf("got %x; want prev + %x", got, want)
				}
			})
		}
	}
	if _, err := AppendWatchEvent(nil, "ADDED", nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("empty object: got %v; want ErrInvalid", err)
	}
}

// TestConcurrentUse exercises the pooled encoders from many goroutines
// (run with -race).
func TestConcurrentUse(t *testing.T) {
	obj := configMap(4 << 10)
	want, err := Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	for g := 0; g < 8; g++ {
		go func() {
			for i := 0; i < 50; i++ {
				b, err := Marshal(obj)
				if err == nil && string(b) != string(want) {
					err = errors.New("Marshal output differs")
				}
				if err == nil {
					_, err = Unmarshal(b)
				}
				if err == nil {
					_, err = AppendList(nil, "L", "v1", nil, [][]byte{b})
				}
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
