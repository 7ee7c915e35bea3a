package cbor

import (
	"encoding/json"
	"fmt"
	"strconv"

	fxcbor "github.com/fxamacker/cbor/v2"
)

// kubeEnc is kube's encoder (k8s.io/apimachinery/pkg/runtime/serializer/
// cbor/internal/modes/encode.go, `encode`), rebuilt from its options. The
// tests use it as the oracle for every byte this package writes; the
// conformance module checks the same against apimachinery itself.
var kubeEnc = func() fxcbor.EncMode {
	em, err := fxcbor.EncOptions{
		Sort:                 fxcbor.SortBytewiseLexical,
		ShortestFloat:        fxcbor.ShortestFloat16,
		NaNConvert:           fxcbor.NaNConvertReject,
		InfConvert:           fxcbor.InfConvertReject,
		BigIntConvert:        fxcbor.BigIntConvertReject,
		Time:                 fxcbor.TimeRFC3339Nano,
		TimeTag:              fxcbor.EncTagNone,
		IndefLength:          fxcbor.IndefLengthForbidden,
		NilContainers:        fxcbor.NilContainerAsNull,
		TagsMd:               fxcbor.TagsAllowed,
		OmitEmpty:            fxcbor.OmitEmptyGoValue,
		String:               fxcbor.StringToByteString,
		FieldName:            fxcbor.FieldNameToByteString,
		ByteArray:            fxcbor.ByteArrayToArray,
		ByteSliceLaterFormat: fxcbor.ByteSliceLaterFormatBase64,
		BinaryMarshaler:      fxcbor.BinaryMarshalerNone,
		TextMarshaler:        fxcbor.TextMarshalerTextString,
	}.EncMode()
	if err != nil {
		panic(err)
	}
	return em
}()

// kubeForm converts a JSON-form value to what kube's unstructured JSON
// decoding holds: json.Number becomes int64 or float64.
func kubeForm(v any) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		if v == nil {
			return v, nil
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			y, err := kubeForm(x)
			if err != nil {
				return nil, err
			}
			out[k] = y
		}
		return out, nil
	case []any:
		if v == nil {
			return v, nil
		}
		out := make([]any, len(v))
		for i, x := range v {
			y, err := kubeForm(x)
			if err != nil {
				return nil, err
			}
			out[i] = y
		}
		return out, nil
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return i, nil
		}
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return nil, err
		}
		return f, nil
	case nil, string, bool, int64, int, int32, uint64, uint32, float64, float32, []string, map[string]string:
		return v, nil
	}
	return nil, fmt.Errorf("kubeForm: unsupported %T", v)
}

// kubeEncode is kube's serializer's Encode of an unstructured object.
func kubeEncode(v any) ([]byte, error) {
	k, err := kubeForm(v)
	if err != nil {
		return nil, err
	}
	b, err := kubeEnc.Marshal(k)
	if err != nil {
		return nil, err
	}
	return append([]byte(SelfDescribed), b...), nil
}
