package rv

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
		err  bool
	}{
		{in: "", want: 0},
		{in: "0", want: 0},
		{in: "1", want: 1},
		{in: "42", want: 42},
		{in: "18446744073709551615", want: 1<<64 - 1},
		{in: "18446744073709551616", err: true},
		{in: "00", err: true},
		{in: "01", err: true},
		{in: "-1", err: true},
		{in: "+1", err: true},
		{in: " 1", err: true},
		{in: "1 ", err: true},
		{in: "1e3", err: true},
		{in: "0x10", err: true},
		{in: "abc", err: true},
		{in: "１", err: true}, // fullwidth digit
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if tt.err {
				if err == nil {
					t.Fatalf("Parse(%q) = %d; want an error", tt.in, got)
				}
				if !errors.Is(err, ErrBadRequest) {
					t.Errorf("Parse(%q) error %v; want ErrBadRequest", tt.in, err)
				}
				if !strings.Contains(err.Error(), `invalid resource version`) || !strings.Contains(err.Error(), strconv.Quote(tt.in)) {
					t.Errorf("Parse(%q) error %q; want it to quote the value", tt.in, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Parse(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseLongValue(t *testing.T) {
	in := strings.Repeat("9", 1000)
	_, err := Parse(in)
	if err == nil {
		t.Fatalf("Parse of 1000 digits: no error; want one")
	}
	if n := len(err.Error()); n > 300 { // kube quotes the value twice
		t.Errorf("error is %d bytes long; want the value truncated", n)
	}
	if !strings.Contains(err.Error(), "...") {
		t.Errorf("error %q; want the value marked as truncated", err)
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		in   uint64
		want string
	}{
		{0, "0"},
		{1, "1"},
		{1234567890, "1234567890"},
		{1<<64 - 1, "18446744073709551615"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := Format(tt.in); got != tt.want {
				t.Errorf("Format(%d) = %q; want %q", tt.in, got, tt.want)
			}
			if got := string(Append([]byte("rv="), tt.in)); got != "rv="+tt.want {
				t.Errorf("Append(%d) = %q; want %q", tt.in, got, "rv="+tt.want)
			}
			if back, err := Parse(tt.want); err != nil || back != tt.in {
				t.Errorf("Parse(Format(%d)) = %d, %v; want %d", tt.in, back, err, tt.in)
			}
		})
	}
}

func TestMatchString(t *testing.T) {
	tests := []struct {
		m    Match
		want string
	}{
		{MostRecent, "MostRecent"},
		{Any, "Any"},
		{NotOlderThan, "NotOlderThan"},
		{Exact, "Exact"},
		{Match(9), "Match(9)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.m.String(); got != tt.want {
				t.Errorf("String() = %q; want %q", got, tt.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "0", "1", "42", "00", "01", "-1", "+1", "18446744073709551615", "18446744073709551616", "1e3", " 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Parse(s)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrBadRequest) {
				t.Fatalf("Parse(%q) error %#v; want an *Error of kind ErrBadRequest", s, err)
			}
			return
		}
		if s == "" {
			if v != 0 {
				t.Fatalf("Parse(\"\") = %d; want 0", v)
			}
			return
		}
		if got := Format(v); got != s {
			t.Fatalf("Format(Parse(%q)) = %q; want the input back", s, got)
		}
	})
}
