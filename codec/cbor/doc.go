// Package cbor writes and reads Kubernetes' CBOR representation of objects
// (application/cbor, and application/cbor-seq watch streams) byte for byte
// as k8s.io/apimachinery's CBOR serializer does, working on kapi's JSON
// form of an object: map[string]any, []any, string, bool, nil and
// json.Number.
//
// kube's encoder writes every Go string as a byte string, every integer in
// its shortest head, every float in the narrowest IEEE 754 width that holds
// it exactly, and map keys in RFC 8949 deterministic order (shorter keys
// first, then bytewise), and it opens each document with the self-described
// CBOR tag. {"kind":"A","apiVersion":"v1"} is thus
//
//	d9 d9 f7                         tag 55799, self-described CBOR
//	a2                               map, 2 pairs
//	   44 6b 69 6e 64                bytes(4) "kind"
//	   41 41                         bytes(1) "A"
//	   4a 61 70 69 56 65 72 ...      bytes(10) "apiVersion"
//	   42 76 31                      bytes(2) "v1"
//
// and the number 1.5 is f9 3e 00 (float16), 0.1 is fb 3f b9 99 99 99 99 99
// 9a (float64), json.Number("1") is 01 and json.Number("1.0") is f9 3c 00.
//
// [Marshal] and [AppendValue] encode; [AppendList] and [AppendWatchEvent]
// assemble list bodies and watch-stream items from already-encoded objects
// without re-encoding them. [Unmarshal] decodes a request body with kube's
// own decoder options (fxamacker/cbor), refusing what kube refuses:
// duplicate keys, invalid UTF-8 text, NaN, integers beyond int64 and the
// like, within kube's bounds on depth and sizes. Every error wraps
// [ErrInvalid].
//
// Functions are safe for concurrent use.
package cbor
