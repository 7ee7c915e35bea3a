package jsonobj

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kapi-dev/kapi/internal/jsontree"
)

// ErrNotObject is returned for bodies that are valid JSON but not an object.
var ErrNotObject = errors.New("the body must be a JSON object")

// Decode decodes a JSON object body as decodeStd does (numbers as
// json.Number), and with dups its duplicate fields (Duplicates' answer),
// in one pass of jsontree's decoder. On what jsontree refuses (invalid
// JSON, data after the object, a number out of range, a body that is not
// an object) it answers with decodeStd and Duplicates: encoding/json's error
// messages, which kapi's 400s quote as kube's do. FuzzDecode holds the
// two paths to the same answers.
func Decode(b []byte, dups bool) (map[string]any, []string, error) {
	v, d, err := jsontree.Decode(b, jsontree.Options{Numbers: jsontree.Exact, Duplicates: dups})
	if m, ok := v.(map[string]any); ok && err == nil {
		return m, d, nil
	}
	obj, err := decodeStd(b)
	if err != nil || !dups {
		return obj, nil, err
	}
	return obj, Duplicates(b, obj), nil
}

// decodeStd decodes a JSON object body with encoding/json (Decoder and
// UseNumber): Decode's answer where jsontree's decoder refuses a body.
func decodeStd(b []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, jsonError(err)
	}
	if len(bytes.TrimLeft(b[d.InputOffset():], " \t\r\n")) > 0 {
		return nil, errors.New("unexpected data after the JSON object")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, ErrNotObject
	}
	if err := CheckNumbers(m); err != nil {
		return nil, err
	}
	return m, nil
}

// CheckNumbers refuses numbers no client can decode: integers beyond int64
// that are not valid float64s either (such as 1e400).
func CheckNumbers(v any) error {
	switch v := v.(type) {
	case map[string]any:
		for _, x := range v {
			if err := CheckNumbers(x); err != nil {
				return err
			}
		}
	case []any:
		for _, x := range v {
			if err := CheckNumbers(x); err != nil {
				return err
			}
		}
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return nil
		}
		if _, err := v.Float64(); err != nil {
			return fmt.Errorf("number %s is out of range", truncateNumber(v.String()))
		}
	}
	return nil
}

func truncateNumber(s string) string {
	if len(s) > 32 {
		return s[:32] + "..."
	}
	return s
}

func jsonError(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("invalid JSON at byte %d: %v", se.Offset, se)
	}
	return fmt.Errorf("invalid JSON: %v", err)
}

// Kind names a JSON value's kind as encoding/json's errors do.
func Kind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case bool:
		return "bool"
	case string:
		return "string"
	case json.Number, float64, int64:
		return "number"
	}
	return "value"
}
