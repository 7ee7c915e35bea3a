package cbor

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestAppendValue(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string // hex
	}{
		{"null", nil, "f6"},
		{"false", false, "f4"},
		{"true", true, "f5"},
		{"empty string", "", "40"},
		{"string is a byte string", "a", "4161"},
		{"unicode", "ü", "42c3bc"},
		{"non-UTF-8 written as is", "\xff\xfe", "42fffe"},
		{"24-byte string", strings.Repeat("x", 24), "5818" + strings.Repeat("78", 24)},
		{"int 0", json.Number("0"), "00"},
		{"int 23", json.Number("23"), "17"},
		{"int 24", json.Number("24"), "1818"},
		{"int 255", json.Number("255"), "18ff"},
		{"int 256", json.Number("256"), "190100"},
		{"int 65536", json.Number("65536"), "1a00010000"},
		{"int 2^32", json.Number("4294967296"), "1b0000000100000000"},
		{"int -1", json.Number("-1"), "20"},
		{"int -24", json.Number("-24"), "37"},
		{"int -25", json.Number("-25"), "3818"},
		{"max int64", json.Number("9223372036854775807"), "1b7fffffffffffffff"},
		{"min int64", json.Number("-9223372036854775808"), "3b7fffffffffffffff"},
		{"-0 is the integer 0", json.Number("-0"), "00"},
		{"beyond int64 is a float", json.Number("9223372036854775808"), "fa5f000000"},
		{"below int64 is a float", json.Number("-9223372036854775809"), "fadf000000"},
		{"huge integer literal", json.Number("1" + strings.Repeat("0", 30)), "fb46293e5939a08cea"},
		{"float 1.0 is float16", json.Number("1.0"), "f93c00"},
		{"float 1e0", json.Number("1e0"), "f93c00"},
		{"float 0.5", json.Number("0.5"), "f93800"},
		{"float -0.0", json.Number("-0.0"), "f98000"},
		{"float 65504 max half", json.Number("65504.0"), "f97bff"},
		{"float 65505 needs float32", json.Number("65505.0"), "fa477fe100"},
		{"float 0.1 needs float64", json.Number("0.1"), "fb3fb999999999999a"},
		{"float 100000.0 float32", json.Number("100000.0"), "fa47c35000"},
		{"smallest half subnormal", json.Number("5.960464477539063e-8"), "f90001"},
		{"largest half subnormal", 0.00006097555160522461, "f903ff"},
		{"float64 value", 1.5, "f93e00"},
		{"float32 value", float32(3.4028234663852886e+38), "fa7f7fffff"},
		{"int", 7, "07"},
		{"int64", int64(-500), "3901f3"},
		{"int32", int32(1000), "1903e8"},
		{"uint64", uint64(math.MaxUint64), "1bffffffffffffffff"},
		{"empty array", []any{}, "80"},
		{"nil array", []any(nil), "f6"},
		{"nil map", map[string]any(nil), "f6"},
		{"empty map", map[string]any{}, "a0"},
		{"[]string", []string{"a"}, "814161"},
		{"map[string]string", map[string]string{"bb": "1", "a": "2"}, "a241614132426262" + "4131"},
		{"array", []any{json.Number("1"), "x", nil, true}, "84014178f6f5"},
		{
			"keys: shorter first, then bytewise",
			map[string]any{"b": nil, "aa": nil, "a": nil, "B": nil, "ü": nil},
			"a5" + "4142f6" + "4161f6" + "4162f6" + "426161f6" + "42c3bcf6",
		},
		{
			"nested",
			map[string]any{"metadata": map[string]any{"name": "x", "labels": map[string]any{"a": "b"}}},
			"a1" + "486d65746164617461" + "a2" + "446e616d65" + "4178" + "466c6162656c73" + "a141614162",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AppendValue(nil, tt.in)
			if err != nil {
				t.Fatalf("AppendValue: %v", err)
			}
			if h := hex.EncodeToString(got); h != tt.want {
				t.Errorf("got %s; want %s", h, tt.want)
			}
			kube, err := kubeEncode(tt.in)
			if err != nil {
				t.Fatalf("kube: %v", err)
			}
			if h, k := hex.EncodeToString(got), hex.EncodeToString(kube[3:]); h != k {
				t.Errorf("got %s; kube writes %s", h, k)
			}
		})
	}
}

func TestAppendValueErrors(t *testing.T) {
	deep := any(map[string]any{})
	for range maxDepth {
		deep = []any{deep}
	}
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"NaN", math.NaN(), "NaN"},
		{"+Inf", math.Inf(1), "infinity"},
		{"-Inf float32", float32(math.Inf(-1)), "infinity"},
		{"number out of range", json.Number("1e400"), `number "1e400": value out of range`},
		{"not a number", json.Number("abc"), `number "abc": invalid syntax`},
		{"empty number", json.Number(""), `number ""`},
		{"NaN number", json.Number("NaN"), "NaN"},
		{"unsupported type", struct{}{}, "unsupported type struct {}"},
		{"unsupported nested", map[string]any{"a": []any{int16(1)}}, "unsupported type int16"},
		{"too deep", deep, "nesting deeper than 10000 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := []byte("keep")
			got, err := AppendValue(dst, tt.in)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("got err %v; want one wrapping ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %q; want it to contain %q", err, tt.want)
			}
			if string(got) != "keep" {
				t.Errorf("got dst %q; want it unchanged", got)
			}
		})
	}
}

func TestMarshal(t *testing.T) {
	tests := []struct {
		name string
		in   map[string]any
		want string
	}{
		{"nil is an empty map", nil, "d9d9f7a0"},
		{"empty", map[string]any{}, "d9d9f7a0"},
		{
			"tiny object",
			map[string]any{"kind": "A", "apiVersion": "v1"},
			"d9d9f7a2446b696e644141" + "4a61706956657273696f6e" + "427631",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Marshal(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if h := hex.EncodeToString(got); h != tt.want {
				t.Errorf("got %s; want %s", h, tt.want)
			}
		})
	}
	if _, err := Marshal(map[string]any{"a": math.Inf(1)}); !errors.Is(err, ErrInvalid) {
		t.Errorf("got %v; want ErrInvalid", err)
	}
}

// TestMarshalConfigMap compares a realistic object with kube's encoder.
func TestMarshalConfigMap(t *testing.T) {
	for _, size := range []int{2 << 10, 100 << 10} {
		obj := configMap(size)
		got, err := Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		want, err := kubeEncode(obj)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("size %d: got %x; kube writes %x", size, got, want)
		}
	}
}

// TestFloatWidths checks the float width choice against kube's encoder for
// every binary16 value, its float32 and float64 neighbours, and random
// floats of every exponent.
func TestFloatWidths(t *testing.T) {
	check := func(f float64) {
		t.Helper()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return
		}
		got, err := AppendValue(nil, f)
		if err != nil {
			t.Fatalf("%g: %v", f, err)
		}
		want, err := kubeEnc.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("%g (%#x): got %x; kube writes %x", f, math.Float64bits(f), got, want)
		}
	}
	for h := range 1 << 16 {
		f := half(uint16(h))
		f32 := float32(f)
		check(f)
		check(float64(math.Nextafter32(f32, float32(math.Inf(1)))))
		check(float64(math.Nextafter32(f32, float32(math.Inf(-1)))))
		check(math.Nextafter(f, math.Inf(1)))
		check(float64(f32) * 0.5)
		check(float64(f32) * 0.25)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		check(math.Float64frombits(r.Uint64()))
		check(float64(math.Float32frombits(r.Uint32())))
	}
}

// half decodes binary16 bits.
func half(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	mant := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(mant, -24)
	case 0x1f:
		if mant == 0 {
			return math.Inf(int(sign))
		}
		return math.NaN()
	}
	return sign * math.Ldexp(1+mant/1024, exp-15)
}
