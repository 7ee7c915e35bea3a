package jsonval_test

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi/internal/jsonval"
)

func TestNumber(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want any
	}{
		{json.Number("3"), int64(3)},
		{json.Number("-9223372036854775808"), int64(math.MinInt64)},
		{json.Number("9223372036854775808"), 9223372036854775808.0},
		{json.Number("1.5"), 1.5},
		{json.Number("1e3"), 1000.0},
		{json.Number("1e400"), math.Inf(1)},
		{"s", "s"},
		{true, true},
		{nil, nil},
	} {
		if got := jsonval.Number(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Number(%#v) = %#v; want %#v", tc.in, got, tc.want)
		}
	}
}

func TestCopyAndConvert(t *testing.T) {
	in := map[string]any{"a": []any{json.Number("1"), map[string]any{"b": json.Number("2.5")}}, "c": "x"}
	want := map[string]any{"a": []any{int64(1), map[string]any{"b": 2.5}}, "c": "x"}
	got := jsonval.Copy(in, jsonval.Number)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Copy = %v; want %v", got, want)
	}
	if in["a"].([]any)[0] != json.Number("1") {
		t.Error("Copy changed its input")
	}
	plain := jsonval.Copy(in, nil).(map[string]any)
	plain["a"].([]any)[1].(map[string]any)["b"] = "changed"
	if !reflect.DeepEqual(in["a"].([]any)[1], map[string]any{"b": json.Number("2.5")}) {
		t.Error("a copy shares a map with its input")
	}
	if got := jsonval.Convert(in, jsonval.Number); !reflect.DeepEqual(got, want) || !reflect.DeepEqual(in, want) {
		t.Errorf("Convert = %v, input %v; want both %v", got, in, want)
	}
}

func ExampleCopy() {
	var v any
	_ = json.Unmarshal([]byte(`{"replicas":3,"ports":[80,443]}`), &v)
	c := jsonval.Copy(v, nil).(map[string]any)
	c["replicas"] = 5.0
	fmt.Println(v.(map[string]any)["replicas"], c["replicas"])
	// Output: 3 5
}

func TestScalar(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{"a b", "a b"}, {nil, ""}, {json.Number("1.50"), "1.50"}, {true, "true"}, {false, "false"},
		{int64(7), "7"}, {0.5, "0.5"}, {[]any{"x", 1}, `["x",1]`}, {map[string]any{"k": "<v>"}, `{"k":"\u003cv\u003e"}`},
	}
	for _, tt := range tests {
		if got := jsonval.Scalar(tt.in); got != tt.want {
			t.Errorf("Scalar(%#v): got %q; want %q", tt.in, got, tt.want)
		}
	}
}
