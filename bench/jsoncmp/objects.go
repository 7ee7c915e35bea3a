package jsoncmp

import "github.com/kapi-dev/kapi/internal/benchobj"

// Object returns the deterministic widget-like object of about size bytes
// of JSON that kapi's own decode benchmarks use (internal/benchobj), in
// the form kapi holds: numbers as json.Number.
func Object(size int) map[string]any { return benchobj.Object(size) }

// Encode is encoding/json.Marshal that cannot fail on Object's values.
func Encode(v any) []byte { return benchobj.Encode(v) }
