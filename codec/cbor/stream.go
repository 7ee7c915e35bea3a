package cbor

import (
	"bytes"
	"slices"
)

// AppendList appends a complete list response body to dst: [SelfDescribed]
// and a map of kind, items, metadata and apiVersion, in that order (kube's
// deterministic key order: shorter keys first). items are already-encoded
// values from [AppendValue], copied in as they are; an item that starts with
// SelfDescribed (a [Marshal] result) loses the tag, because kube writes list
// items as bare maps. A nil metadata is written as an empty map.
//
// These are the bytes kube's serializer writes for an
// *unstructured.UnstructuredList whose Object holds exactly kind, apiVersion
// and metadata (k8s.io/apimachinery/pkg/runtime/serializer/cbor
// collections.go, streamingEncodeUnstructuredList). An empty items is an
// empty array, never null. On error it returns dst unchanged.
//
//	d9d9f7                    tag 55799
//	a4                        map, 4 pairs
//	  44 "kind"               <kind>
//	  45 "items"  8n          array of n, then the items' bytes
//	  48 "metadata"           <metadata>
//	  4a "apiVersion"         <apiVersion>
func AppendList(dst []byte, kind, apiVersion string, metadata map[string]any, items [][]byte) ([]byte, error) {
	n := len(dst)
	size := 64 + len(kind) + len(apiVersion)
	for _, it := range items {
		if len(it) == 0 {
			return dst, &valueError{"empty list item"}
		}
		size += len(it)
	}
	dst = slices.Grow(dst, size)
	dst = append(dst, SelfDescribed...)
	dst = append(dst, majorMap|4)
	dst = appendText(dst, "kind")
	dst = appendText(dst, kind)
	dst = appendText(dst, "items")
	dst = appendHead(dst, majorArray, uint64(len(items)))
	for _, it := range items {
		dst = append(dst, bytes.TrimPrefix(it, selfDescribed)...)
	}
	dst = appendText(dst, "metadata")
	if metadata == nil {
		dst = append(dst, majorMap)
	} else {
		var err error
		if dst, err = AppendValue(dst, metadata); err != nil {
			return dst[:n], err
		}
	}
	dst = appendText(dst, "apiVersion")
	dst = appendText(dst, apiVersion)
	return dst, nil
}

// AppendWatchEvent appends one item of an application/cbor-seq watch stream
// to dst, as kube-apiserver writes it: the event is a metav1.WatchEvent
// encoded by the CBOR serializer, so the item opens with [SelfDescribed]; its
// object is a runtime.RawExtension holding the object's own encoding, which
// RawExtension.MarshalCBOR embeds verbatim as a nested data item (not as a
// byte string), still wrapped in its self-described tag. object is a
// [Marshal] result, or an [AppendValue] result, in which case the tag is
// added. A CBOR sequence needs no framing: items simply follow each other.
//
//	d9d9f7                    tag 55799
//	a2                        map, 2 pairs (struct fields, sorted)
//	  44 "type"   <typ>       byte string, e.g. 45 "ADDED"
//	  46 "object" d9d9f7 ...  the object, tagged
//
// On error it returns dst unchanged.
func AppendWatchEvent(dst []byte, typ string, object []byte) ([]byte, error) {
	if len(object) == 0 {
		return dst, &valueError{"empty watch event object"}
	}
	tagged := bytes.HasPrefix(object, selfDescribed)
	size := 2*len(SelfDescribed) + 16 + len(typ) + len(object)
	dst = slices.Grow(dst, size)
	dst = append(dst, SelfDescribed...)
	dst = append(dst, majorMap|2)
	dst = appendText(dst, "type")
	dst = appendText(dst, typ)
	dst = appendText(dst, "object")
	if !tagged {
		dst = append(dst, SelfDescribed...)
	}
	return append(dst, object...), nil
}

// appendText writes s as kube writes Go strings: a byte string.
func appendText(b []byte, s string) []byte {
	return append(appendHead(b, majorBytes, uint64(len(s))), s...)
}

var selfDescribed = []byte(SelfDescribed)
