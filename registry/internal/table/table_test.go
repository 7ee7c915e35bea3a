package table

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func TestPath(t *testing.T) {
	var obj map[string]any
	if err := json.Unmarshal([]byte(`{
		"spec": {"replicas": 3, "ports": [{"port": 80}, {"port": 443}]},
		"metadata": {"labels": {"app.kubernetes.io/name": "web"}},
		"status": {"conditions": [{"type": "Synced", "status": "False"}, {"type": "Ready", "status": "True"}]}
	}`), &obj); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path   string
		want   any
		wantOK bool
	}{
		{".spec.replicas", 3.0, true},
		{"{.spec.replicas}", 3.0, true},
		{".spec.ports[1].port", 443.0, true},
		{".spec.ports[*].port", 80.0, true},
		{".spec.ports[2].port", nil, false},
		{`.status.conditions[?(@.type=="Ready")].status`, "True", true},
		{`.metadata.labels['app.kubernetes.io/name']`, "web", true},
		{".spec.missing", nil, false},
		{".spec.replicas.deeper", nil, false},
	}
	for _, tt := range tests {
		p, err := ParsePath(tt.path)
		if err != nil {
			t.Errorf("ParsePath(%q): %v", tt.path, err)
			continue
		}
		got, ok := p.Find(obj)
		if !reflect.DeepEqual(got, tt.want) || ok != tt.wantOK {
			t.Errorf("%s: got %v, %v; want %v, %v", tt.path, got, ok, tt.want, tt.wantOK)
		}
	}
	for _, bad := range []string{"spec", ".spec..x", ".a[", ".a[-1]", ".a[?(@.x==y)]"} {
		if _, err := ParsePath(bad); err == nil {
			t.Errorf("ParsePath(%q): got no error; want one", bad)
		}
	}
}

func TestCell(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		typ  string
		v    any
		want any
	}{
		{"integer", json.Number("7"), int64(7)},
		{"integer", json.Number("7.9"), int64(7)},
		{"integer", "7", nil},
		{"number", json.Number("1.5"), 1.5},
		{"boolean", true, true},
		{"boolean", "true", nil},
		{"string", json.Number("12"), "12"},
		{"string", map[string]any{"a": "b"}, `{"a":"b"}`},
		{"string", nil, nil},
		{"date", "2026-01-02T03:00:00Z", "4m5s"},
		{"date", "yesterday", "<invalid>"},
	}
	for _, tt := range tests {
		if got := Cell(tt.typ, tt.v, now); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Cell(%s, %#v): got %#v; want %#v", tt.typ, tt.v, got, tt.want)
		}
	}
}

func TestAge(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{-2 * time.Second, "<invalid>"},
		{45 * time.Second, "45s"},
		{200 * time.Second, "3m20s"},
		{30 * time.Minute, "30m"},
		{5*time.Hour + 10*time.Minute, "5h10m"},
		{20 * time.Hour, "20h"},
		{3*24*time.Hour + 2*time.Hour, "3d2h"},
		{100 * 24 * time.Hour, "100d"},
		{3*365*24*time.Hour + 24*time.Hour, "3y1d"},
		{10 * 365 * 24 * time.Hour, "10y"},
	}
	for _, tt := range tests {
		if got := Age(tt.d); got != tt.want {
			t.Errorf("Age(%v): got %q; want %q", tt.d, got, tt.want)
		}
	}
}
