package cbor

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	fxcbor "github.com/fxamacker/cbor/v2"
)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestUnmarshal(t *testing.T) {
	tests := []struct {
		name string
		in   string // hex
		want any    // the value of key "v", or the whole map if a map[string]any
	}{
		{"tagged", "d9d9f7 a1 4176 01", json.Number("1")},
		{"untagged", "a1 4176 01", json.Number("1")},
		{"tag twice", "d9d9f7 d9d9f7 a1 4176 01", json.Number("1")},
		{"text keys and strings", "a1 6176 6178", "x"},
		{"byte string", "a1 4176 42fffe", "\xff\xfe"},
		{"unicode text", "a1 4176 62c3bc", "ü"},
		{"negative int", "a1 4176 3903e7", json.Number("-1000")},
		{"max int64", "a1 4176 1b7fffffffffffffff", json.Number("9223372036854775807")},
		{"min int64", "a1 4176 3b7fffffffffffffff", json.Number("-9223372036854775808")},
		{"float16 1.0 stays a float", "a1 4176 f93c00", json.Number("1.0")},
		{"float16 -0.0", "a1 4176 f98000", json.Number("-0.0")},
		{"float16 0.5", "a1 4176 f93800", json.Number("0.5")},
		{"float32 100000", "a1 4176 fa47c35000", json.Number("100000.0")},
		{"float64 0.1", "a1 4176 fb3fb999999999999a", json.Number("0.1")},
		{"float64 1e21", "a1 4176 fb444b1ae4d6e2ef50", json.Number("1e+21")},
		{"float64 1e-7", "a1 4176 fb3e7ad7f29abcaf48", json.Number("1e-7")},
		{"null", "a1 4176 f6", nil},
		{"true", "a1 4176 f5", true},
		{"false", "a1 4176 f4", false},
		{"array", "a1 4176 83 01 f93e00 4161", []any{json.Number("1"), json.Number("1.5"), "a"}},
		{"indefinite array", "a1 4176 9f 01 02 ff", []any{json.Number("1"), json.Number("2")}},
		{"indefinite map", "bf 4176 01 ff", json.Number("1")},
		{"indefinite byte string", "a1 4176 5f 4161 4162 ff", "ab"},
		{"nested map", "a1 4176 a1 4161 80", map[string]any{"a": []any{}}},
		{"unknown tag dropped", "a1 4176 d86e 01", json.Number("1")},
		{"time tag 0", "a1 4176 c0 74323032342d30352d30315431303a30303a30305a", "2024-05-01T10:00:00Z"},
		{"time tag 1", "a1 4176 c1 1a663212a0", "2024-05-01T10:00:00Z"},
		{"expected base64", "a1 4176 d6 43010203", "AQID"},
		{"expected base64url", "a1 4176 d5 43fbff00", "-_8A"},
		{"expected base16", "a1 4176 d7 43010203", "010203"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Unmarshal(mustHex(t, tt.in))
			if err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if !reflect.DeepEqual(got["v"], tt.want) {
				t.Errorf("got %#v; want %#v", got["v"], tt.want)
			}
		})
	}
}

func TestUnmarshalErrors(t *testing.T) {
	deep := strings.Repeat("81", maxDepth) + "a0"
	tests := []struct {
		name string
		in   string // hex
		want string // in the message
	}{
		{"empty", "", "EOF"},
		{"truncated", "a1 4176", "unexpected EOF"},
		{"trailing bytes", "a0 a0", "extraneous data"},
		{"not a map", "d9d9f7 01", "cannot unmarshal"},
		{"array", "80", "cannot unmarshal array"},
		{"null body", "f6", "body is null"},
		{"duplicate key", "a2 4161 01 4161 02", "duplicate map key"},
		{"duplicate key text and bytes", "a2 4161 01 6161 02", "duplicate map key"},
		{"duplicate nested", "a1 4176 a2 4161 01 4161 02", "duplicate map key"},
		{"integer key", "a1 01 01", "cannot unmarshal"},
		{"array key", "a1 80 01", "cannot unmarshal"},
		{"NaN", "a1 4176 f97e00", "NaN"},
		{"Inf", "a1 4176 f97c00", "infinity"},
		{"-Inf float64", "a1 4176 fbfff0000000000000", "infinity"},
		{"uint beyond int64", "a1 4176 1bffffffffffffffff", "overflows"},
		{"negative beyond int64", "a1 4176 3b8000000000000000", "overflows"},
		{"bignum", "a1 4176 c2 4101", "bignum"},
		{"undefined", "a1 4176 f7", "simple value 23"},
		{"simple value 0", "a1 4176 e0", "simple value 0"},
		{"invalid UTF-8 text", "a1 4176 62fffe", "invalid UTF-8"},
		{"invalid UTF-8 key", "a1 62fffe 01", "invalid UTF-8"},
		{"reserved additional info", "a1 4176 1c", "invalid additional information"},
		{"huge array length", "a1 4176 9b7fffffffffffffff", "exceeded max number of elements 2147483647"},
		{"huge map length", "bb7fffffffffffffff", "exceeded max number of key-value pairs"},
		{"too many map pairs", "ba00200001", "exceeded max number of key-value pairs 2097152"},
		{"too deep", "a1 4176" + deep, "exceeded max nested level"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Unmarshal(mustHex(t, tt.in))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("got %v, %v; want an error wrapping ErrInvalid", got, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %q; want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestUnmarshalErrorUnwraps(t *testing.T) {
	_, err := Unmarshal(mustHex(t, "a2 4161 01 4161 02"))
	var dup *fxcbor.DupMapKeyError
	if !errors.As(err, &dup) {
		t.Errorf("got %v; want it to unwrap to *cbor.DupMapKeyError", err)
	}
}

// TestRoundTrip: what Marshal writes, Unmarshal reads back to the same
// JSON form, numbers included (a float stays a float).
func TestRoundTrip(t *testing.T) {
	in := map[string]any{
		"i":  json.Number("42"),
		"n":  json.Number("-7"),
		"f":  json.Number("1.0"),
		"g":  json.Number("0.1"),
		"h":  json.Number("1e+21"),
		"s":  "größe",
		"b":  "\x00\xff",
		"t":  true,
		"z":  nil,
		"a":  []any{json.Number("1"), map[string]any{}, []any{}},
		"m":  map[string]any{"x": map[string]any{"y": "z"}},
		"":   "empty key",
		"up": json.Number("9223372036854775808"),
	}
	b, err := Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	in["up"] = json.Number("9223372036854776000.0") // beyond int64: a float, as encoding/json writes it
	if !reflect.DeepEqual(got, in) {
		t.Errorf("got %#v; want %#v", got, in)
	}
}

func TestFloatNumber(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0.0"}, {1, "1.0"}, {-2, "-2.0"}, {0.25, "0.25"}, {1e20, "100000000000000000000.0"},
		{1e21, "1e+21"}, {1e-6, "0.000001"}, {1e-7, "1e-7"}, {1.5e-10, "1.5e-10"}, {1.7976931348623157e308, "1.7976931348623157e+308"},
	}
	for _, tt := range tests {
		if got := floatNumber(tt.in); string(got) != tt.want {
			t.Errorf("floatNumber(%g): got %s; want %s", tt.in, got, tt.want)
		}
	}
}

// TestDepthBoundary: the deepest body the decoder takes (10000 levels, kube's
// limit) encodes again; one level more is refused both ways.
func TestDepthBoundary(t *testing.T) {
	body := mustHex(t, "a1 4176"+strings.Repeat("81", maxDepth-2)+"a0")
	v, err := Unmarshal(body)
	if err != nil {
		t.Fatalf("Unmarshal at the limit: %v", err)
	}
	b, err := Marshal(v)
	if err != nil {
		t.Fatalf("Marshal at the limit: %v", err)
	}
	if string(b[len(SelfDescribed):]) != string(body) {
		t.Errorf("got %x; want the body back", b)
	}
	if _, err := Unmarshal(mustHex(t, "a1 4176"+strings.Repeat("81", maxDepth-1)+"a0")); !errors.Is(err, ErrInvalid) {
		t.Errorf("Unmarshal beyond the limit: got %v; want ErrInvalid", err)
	}
	v["v"] = []any{v["v"]}
	if _, err := Marshal(v); !errors.Is(err, ErrInvalid) {
		t.Errorf("Marshal beyond the limit: got %v; want ErrInvalid", err)
	}
}
