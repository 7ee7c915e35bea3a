package jsonval_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/internal/jsonval"
)

// sameAsStd fails t unless Marshal(v) and encoding/json.Marshal(v) give
// the same bytes, or both an error with the same message, and Append
// appends those bytes (or, on an error, leaves its dst as it was).
func sameAsStd(t *testing.T, v any) {
	t.Helper()
	got, err := jsonval.Marshal(v)
	want, werr := json.Marshal(v)
	if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
		t.Fatalf("Marshal(%#v): err %v; want %v (encoding/json)", v, err, werr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Marshal(%#v) = %s; want %s (encoding/json)", v, got, want)
	}
	dst := append(make([]byte, 0, 64), "x:"...)
	app, aerr := jsonval.Append(dst, v)
	if (aerr == nil) != (werr == nil) || string(app) != "x:"+string(want) {
		t.Fatalf("Append(x:, %#v) = %s, %v; want x:%s, %v", v, app, aerr, want, werr)
	}
}

// manyKeys is a map of n keys of different lengths and cases, with a
// single-key map and an empty one among its values.
func manyKeys(n int) map[string]any {
	m := map[string]any{}
	for i := range n {
		m[strings.Repeat(string(rune('z'-i%26)), 1+i%3)+strings.ToUpper(string(rune('a'+i%26)))] = map[string]any{"only": i}
	}
	m["empty"] = map[string]any{}
	return m
}

type marshaler struct{}

func (marshaler) MarshalJSON() ([]byte, error) { return []byte(` { "b" : "<x>" , "a":1 } `), nil }

func TestMarshalSameAsEncodingJSON(t *testing.T) {
	deep := any("leaf")
	for range 1200 { // deeper than Marshal goes itself
		deep = []any{map[string]any{"d": deep}}
	}
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	for _, tc := range []struct {
		name string
		v    any
	}{
		{"nil", nil},
		{"nil map", map[string]any(nil)},
		{"nil slice", []any(nil)},
		{"empty", map[string]any{"m": map[string]any{}, "l": []any{}}},
		{"sorted keys", map[string]any{"b": 1, "a": 2, "B": 3, "aa": 4, "": 5, "é": 6, "<": 7}},
		{"one key each", map[string]any{"f:spec": map[string]any{"f:template": map[string]any{"f:containers": map[string]any{`k:{"name":"<a>"}`: map[string]any{}}}}}},
		{"many keys", manyKeys(40)}, // beyond sortMembers' insertion sort
		{"escapes", map[string]any{"s": "a\"b\\c\b\f\n\r\t\x00\x1f\x7f<>&'\u2028\u2029é😀", "bad utf-8": "a\xffb\xc3", "\xfe<key>": true}},
		{"integers", []any{int64(math.MinInt64), int64(math.MaxInt64), 0, int8(-8), int16(16), int32(-32), uint(1), uint8(8), uint16(16), uint32(32), uint64(math.MaxUint64)}},
		{"floats", []any{0.0, math.Copysign(0, -1), 1.5, 1e20, 1e21, 123456789e13, 1e-6, 1e-7, 9.999e-7, 5e-324, math.MaxFloat64, -1e-9, 1e100, float32(1e20), float32(1e21), float32(1e-7), float32(3.4e38), float32(0.1)}},
		{"numbers", []any{json.Number("0"), json.Number("-1.5e+10"), json.Number("1E-2"), json.Number("123456789012345678901234567890")}},
		{"empty number", json.Number("")},
		{"bad number", map[string]any{"n": json.Number("01")}},
		{"NaN", []any{math.NaN()}},
		{"Inf", map[string]any{"x": float32(math.Inf(-1))}},
		{"other types", map[string]any{"strs": []string{"<a>"}, "ss": map[string]string{"z": "1", "a": "2"}, "raw": json.RawMessage(`{"z":1,"a":[1, 2]}`), "m": marshaler{}, "st": struct{ A int }{1}}},
		{"bad other", map[string]any{"c": make(chan int)}},
		{"deep", deep},
		{"cycle", cyclic},
	} {
		t.Run(tc.name, func(t *testing.T) { sameAsStd(t, tc.v) })
	}
}

// FuzzMarshal: for any JSON text decoded the three ways kapi and its
// callers decode (float64 numbers, json.Number, client-go's int64 and
// float64), and for raw bytes as keys and strings, Marshal gives
// encoding/json's bytes.
func FuzzMarshal(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":[true,null,"x"],"c":{"d":-1.5e-7}}`,
		`{"metadata":{"name":"w","labels":{"app":"<b>&"}},"spec":{"n":9007199254740993,"f":1e21}}`,
		`["\u2028\u2029\ud800","\u0000",0.000001,1e-7,123456789012345678901234567890]`,
		"{\"k\xff\":\"v\xc3(\"}",
		`3`, `"s"`, `[]`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var plain any
		if json.Unmarshal(b, &plain) == nil {
			sameAsStd(t, plain)
		}
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var num any
		if d.Decode(&num) == nil {
			sameAsStd(t, num)
			sameAsStd(t, jsonval.Convert(jsonval.Copy(num, nil), jsonval.Number))
		}
		s := string(b)
		sameAsStd(t, map[string]any{s: s, "n": json.Number(strings.TrimSpace(s)), "l": []any{s, len(s)}})
	})
}

// BenchmarkMarshal encodes a custom resource and a Deployment as kapi
// stores them (the Deployment with the managedFields of its create):
//
//	go test -run '^$' -bench BenchmarkMarshal -benchmem ./internal/jsonval/
func BenchmarkMarshal(b *testing.B) {
	widget := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w-000001","namespace":"ns-1","uid":"00000000-0000-4000-8000-000000000001","creationTimestamp":"2026-01-01T00:00:00Z","labels":{"app":"bench","shard":"s01"},"annotations":{"example.com/owner":"team-w-000001"}},"spec":{"color":"blue","replicas":3,"counter":0,"sentAt":0,"description":"` +
		strings.Repeat("0123456789abcdef", 93) + `","ports":[{"name":"http","port":80,"protocol":"TCP"},{"name":"https","port":443,"protocol":"TCP"}]},"status":{"readyReplicas":3}}`
	for _, obj := range []struct{ name, json string }{{"widget", widget}, {"deployment", storedDeployment}} {
		var v map[string]any
		if err := json.Unmarshal([]byte(obj.json), &v); err != nil {
			b.Fatal(err)
		}
		v = jsonval.Convert(v, jsonval.Number).(map[string]any)
		for _, tc := range []struct {
			name string
			f    func(any) ([]byte, error)
		}{{"encoding-json", json.Marshal}, {"jsonval", jsonval.Marshal}} {
			b.Run(obj.name+"/"+tc.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := tc.f(v); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// storedDeployment is a Deployment as `kubectl create deployment` makes
// it, stored by kapi.
const storedDeployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"creationTimestamp":"2026-11-26T15:16:48Z","generation":1,"managedFields":[{"apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:progressDeadlineSeconds":{},"f:replicas":{},"f:revisionHistoryLimit":{},"f:selector":{},"f:strategy":{"f:rollingUpdate":{".":{},"f:maxSurge":{},"f:maxUnavailable":{}},"f:type":{}},"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}}},"manager":"kubectl-create","operation":"Update","time":"2026-11-26T15:16:48Z"}],"name":"web","namespace":"default","uid":"632b9d8f-e2e0-498d-bce3-fb05f2d5d0e2"},"spec":{"progressDeadlineSeconds":600,"replicas":1,"revisionHistoryLimit":10,"selector":{"matchLabels":{"app":"web"}},"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"},"type":"RollingUpdate"},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"image":"nginx:1.27","imagePullPolicy":"IfNotPresent","name":"app","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30}}},"status":{}}`
