package cbor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	fxcbor "github.com/fxamacker/cbor/v2"
)

// decMode is kube's decoder (k8s.io/apimachinery/pkg/runtime/serializer/
// cbor/internal/modes/decode.go, the options of `decode`), option for
// option, so that kapi accepts and refuses exactly the bodies kube does.
// The JSONUnmarshalerTranscoder kube adds on top only matters for typed
// destinations; Unmarshal decodes into map[string]any like kube's
// Unstructured path, where strict and lax modes coincide.
var decMode = func() fxcbor.DecMode {
	var rejected []func(*fxcbor.SimpleValueRegistry) error
	for sv := 0; sv <= 255; sv++ {
		switch sv {
		case 20, 21, 22: // false, true, null
		case 24, 25, 26, 27, 28, 29, 30, 31: // reserved, ill-formed anyway
		default:
			rejected = append(rejected, fxcbor.WithRejectedSimpleValue(fxcbor.SimpleValue(sv)))
		}
	}
	simpleValues, err := fxcbor.NewSimpleValueRegistryFromDefaults(rejected...)
	if err != nil {
		panic(err)
	}
	dm, err := fxcbor.DecOptions{
		DupMapKey:                fxcbor.DupMapKeyEnforcedAPF,
		TimeTag:                  fxcbor.DecTagOptional,
		MaxNestedLevels:          maxDepth,
		MaxArrayElements:         2147483647,
		MaxMapPairs:              2097152,
		IndefLength:              fxcbor.IndefLengthAllowed,
		TagsMd:                   fxcbor.TagsAllowed,
		IntDec:                   fxcbor.IntDecConvertSignedOrFail,
		MapKeyByteString:         fxcbor.MapKeyByteStringForbidden,
		ExtraReturnErrors:        fxcbor.ExtraDecErrorUnknownField,
		DefaultMapType:           reflect.TypeFor[map[string]any](),
		UTF8:                     fxcbor.UTF8RejectInvalid,
		FieldNameMatching:        fxcbor.FieldNameMatchingCaseSensitive,
		DefaultByteStringType:    reflect.TypeFor[string](),
		ByteStringToString:       fxcbor.ByteStringToStringAllowedWithExpectedLaterEncoding,
		FieldNameByteString:      fxcbor.FieldNameByteStringAllowed,
		UnrecognizedTagToAny:     fxcbor.UnrecognizedTagContentToAny,
		TimeTagToAny:             fxcbor.TimeTagToRFC3339Nano,
		ByteStringToTime:         fxcbor.ByteStringToTimeAllowed,
		NaN:                      fxcbor.NaNDecodeForbidden,
		Inf:                      fxcbor.InfDecodeForbidden,
		ByteStringExpectedFormat: fxcbor.ByteStringExpectedBase64,
		BignumTag:                fxcbor.BignumTagForbidden,
		SimpleValues:             simpleValues,
		BinaryUnmarshaler:        fxcbor.BinaryUnmarshalerNone,
		TextUnmarshaler:          fxcbor.TextUnmarshalerTextString,
	}.DecMode()
	if err != nil {
		panic(err)
	}
	return dm
}()

// decodeError is a body kube's decoder refuses. It unwraps to ErrInvalid
// and to fxamacker's own error (e.g. *cbor.DupMapKeyError) when there is one.
type decodeError struct {
	msg string
	err error
}

func (e *decodeError) Error() string { return "cbor: invalid body: " + e.msg }

func (e *decodeError) Unwrap() []error {
	if e.err == nil {
		return []error{ErrInvalid}
	}
	return []error{ErrInvalid, e.err}
}

// Unmarshal decodes a request body, with or without the [SelfDescribed] tag
// (kube's decoder takes both), into the JSON form: maps, []any, strings,
// bools, nil, and json.Number for numbers. Integers are written in decimal;
// floats in encoding/json's format with ".0" added where that would read as
// an integer, so that a float stays a float when the value is encoded again.
//
// It refuses what kube refuses: anything but a single map, trailing bytes,
// duplicate or non-string map keys, text strings that are not UTF-8, NaN
// and infinities, integers beyond int64, bignums, simple values other than
// false, true and null, nesting deeper than 10000 levels. Byte strings and
// text strings both become strings; tags kube does not know are dropped
// around their content; a time tag becomes an RFC 3339 string; a byte
// string under an "expected later encoding" tag (21, 22, 23) becomes that
// encoding of its bytes.
func Unmarshal(b []byte) (map[string]any, error) {
	var m map[string]any
	if err := decMode.Unmarshal(b, &m); err != nil {
		return nil, &decodeError{msg: strings.TrimPrefix(err.Error(), "cbor: "), err: err}
	}
	if m == nil {
		return nil, &decodeError{msg: "body is null, not a map"}
	}
	if err := toJSONForm(m); err != nil {
		return nil, err
	}
	return m, nil
}

// toJSONForm replaces, in place, the int64 and float64 values fxamacker
// produces with json.Number. The decoder has already bounded the depth.
func toJSONForm(v any) error {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			y, err := jsonValue(x)
			if err != nil {
				return err
			}
			v[k] = y
		}
	case []any:
		for i, x := range v {
			y, err := jsonValue(x)
			if err != nil {
				return err
			}
			v[i] = y
		}
	}
	return nil
}

// jsonValue is x in the JSON form, converting nested values in place.
func jsonValue(x any) (any, error) {
	switch x := x.(type) {
	case int64:
		return intNumber(x), nil
	case float64:
		return floatNumber(x), nil
	case map[string]any, []any:
		return x, toJSONForm(x)
	case string, bool, nil:
		return x, nil
	}
	return nil, unexpected(x)
}

// unexpected guards against a decoder result kube's options should never
// produce; it is an error rather than a panic so a surprise stays a 400.
func unexpected(x any) error {
	return &decodeError{msg: fmt.Sprintf("unsupported value of type %T", x)}
}

func intNumber(i int64) json.Number { return json.Number(strconv.FormatInt(i, 10)) }

// floatNumber formats f as encoding/json does, then makes sure the text does
// not parse as an integer: 1.0 stays "1.0", not "1" (which kapi, like kube's
// JSON decoding, would read back as the int64 1).
func floatNumber(f float64) json.Number {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b := strconv.AppendFloat(make([]byte, 0, 24), f, format, -1, 64)
	if format == 'e' {
		// encoding/json: clean up e-09 to e-9.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
		return json.Number(b)
	}
	if bytes.IndexByte(b, '.') < 0 {
		b = append(b, ".0"...)
	}
	return json.Number(b)
}
