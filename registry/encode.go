package registry

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/codec/cbor"
	"github.com/kapi-dev/kapi/codec/protobuf"
	"github.com/kapi-dev/kapi/internal/jsonval"
	"github.com/kapi-dev/kapi/registry/internal/jsonobj"
	"github.com/kapi-dev/kapi/registry/internal/negotiate"
	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// Serialize once: a stored state's encoding in each format and view, and
// each watch event's frame, is computed once and kept in the state's
// storage.Memo under a memoKey, so list pages, gets and a thousand watchers
// of the same state share one encoding per media type. The JSON form of an
// object is its stored bytes with the resourceVersion spliced in (a copy,
// not an encoding), so only its watch frames are kept.
//
// Worked example: configmap "a" is written at revision 7 and watched by
// 500 JSON and 500 protobuf clients. The first JSON watcher builds
// memoKey(7, eventMemo, JSON, ADDED) (the
// stored JSON with "resourceVersion":"7" spliced in, framed as an event);
// the first protobuf watcher encodes the protobuf item
// (memoKey(7, itemMemo, protobuf, "")) and its
// length-prefixed frame. The other 998 watchers write the cached frames,
// and a later protobuf list reuses the item. A DELETED event shows the
// last state at the delete's revision, so its keys carry that revision and
// never collide with the state's own.
//
// What a Memo keeps lives as long as the state is current or in the
// watch history: each format in use adds about one encoded size per
// object.

// memoKind separates the kinds of values a memoKey names.
type memoKind uint8

const (
	itemMemo     memoKind = iota // one object in a format and view, no envelope (protobuf: an envelopedItem, the item and its envelope)
	eventMemo                    // one whole watch event, framed
	defaultsMemo                 // the stored JSON with the schema's defaults (withDefaults)
	validMemo                    // nil, or why the stored bytes do not decode (readable)
	clientMemo                   // a Client[T]'s shared *T; What's upper bits number T
	convertMemo                  // the state converted to a resource's version; What's upper bits number it
)

// memoKey names a value derived from a state shown at revision rev:
// What packs the kind, format, view, meta.k8s.io version and event type
// into one word, so a lookup allocates nothing.
func memoKey(rev uint64, kind memoKind, t negotiate.Target, event watch.EventType) storage.MemoKey {
	mv := uint64(0)
	switch t.MetaVersion {
	case "v1":
		mv = 1
	case "v1beta1":
		mv = 2
	}
	ev := uint64(0)
	switch event {
	case watch.Added:
		ev = 1
	case watch.Modified:
		ev = 2
	case watch.Deleted:
		ev = 3
	}
	return storage.MemoKey{Rev: rev, What: uint64(kind) | uint64(t.Format)<<8 | uint64(t.View)<<16 | mv<<24 | ev<<32}
}

// decoded decodes o at revision rev (0: a dry run's object, which has no
// resourceVersion).
func decoded(o storage.Object, rev uint64) (Object, error) {
	obj, err := decodeStored(o.Value, rev)
	if err != nil {
		return nil, errInternal(fmt.Errorf("object %s cannot be decoded: %w", o.Key, err))
	}
	if rev == 0 {
		delete(obj.Meta(), "resourceVersion")
	}
	return obj, nil
}

// item returns o at rev encoded for t, without envelope (a list item).
func (r *Registry) item(res *Resource, o storage.Object, rev uint64, t negotiate.Target) ([]byte, error) {
	if t.Format == negotiate.JSON && t.View == negotiate.Object {
		if rev == 0 {
			return o.Value, nil
		}
		return jsonobj.WithRV(o.Value, rev), nil
	}
	if t.Format == negotiate.Protobuf {
		e, err := r.enveloped(res, o, rev, t)
		return e.raw, err
	}
	k := memoKey(rev, itemMemo, t, "")
	if v, ok := o.Memo.Load(k); ok {
		return v.([]byte), nil
	}
	v, err := o.Memo.Do(k, func() (any, error) {
		r.encodes[t.Format].Add(1)
		return r.encodeItem(res, o, rev, t)
	})
	b, _ := v.([]byte)
	return b, err
}

// envelopedItem is an object's protobuf item inside its envelope: body is
// a get's whole response, raw the item within it, which lists and watch
// events frame anew. One memo entry and one allocation serve both.
type envelopedItem struct{ body, raw []byte }

// enveloped returns o at rev encoded in protobuf for t, in its envelope
// (itemMemo, as item's other formats).
func (r *Registry) enveloped(res *Resource, o storage.Object, rev uint64, t negotiate.Target) (envelopedItem, error) {
	k := memoKey(rev, itemMemo, t, "")
	if v, ok := o.Memo.Load(k); ok {
		return v.(envelopedItem), nil
	}
	v, err := o.Memo.Do(k, func() (any, error) {
		r.encodes[t.Format].Add(1)
		obj, err := decoded(o, rev)
		if err != nil {
			return nil, err
		}
		return r.encodeEnveloped(res, o.Key, obj, t)
	})
	e, _ := v.(envelopedItem)
	return e, err
}

// seedEnveloped puts in o's Memo the protobuf item for t of written, the
// object a create just stored as o (writeRequest.written: what o.Value
// decodes to, but for its resourceVersion, which seedEnveloped sets in
// it), encoded from it: the
// create's response (and the state's later gets, list items and watch
// events) then spares the decode of the stored bytes, a third of the
// encoding's cost. An object the encoding refuses is left to enveloped,
// which decodes the stored bytes and reports the error.
//
//	POST deployments (protobuf) → stored at revision 12
//	  → seedEnveloped: memoKey(12, itemMemo, protobuf) = written + resourceVersion "12", encoded
//	  → writeStored answers with it; a GET of revision 12 too
func (r *Registry) seedEnveloped(res *Resource, t negotiate.Target, o storage.Object, written Object) {
	if written == nil || t.Format != negotiate.Protobuf || t.View != negotiate.Object || o.Revision == 0 || o.Memo == nil || res.Protobuf == nil {
		return
	}
	k := memoKey(o.Revision, itemMemo, t, "")
	if _, ok := o.Memo.Load(k); ok {
		return
	}
	written.Meta()["resourceVersion"] = rv.Format(o.Revision) // written is the pipeline's, done with
	e, err := r.encodeEnveloped(res, o.Key, written, t)
	if err != nil {
		return
	}
	r.encodes[t.Format].Add(1)
	_, _ = o.Memo.Do(k, func() (any, error) { return e, nil })
}

// encodeEnveloped encodes obj, a stored object at its revision, in
// protobuf for t; key names it in errors.
func (r *Registry) encodeEnveloped(res *Resource, key string, obj Object, t negotiate.Target) (envelopedItem, error) {
	v, md := map[string]any(obj), res.Protobuf
	if t.View == negotiate.Partial {
		v, md = partialOf(obj, t), protobuf.PartialObjectMetadata
	}
	body, raw, err := protobuf.MarshalEnvelope(md, res.typeMeta(t, false), v)
	if err != nil {
		return envelopedItem{}, errInternal(fmt.Errorf("cannot encode %s as %s: %w", key, t.Format, err))
	}
	return envelopedItem{body: body, raw: raw}, nil
}

func (r *Registry) encodeItem(res *Resource, o storage.Object, rev uint64, t negotiate.Target) ([]byte, error) {
	if t.Format == negotiate.YAML {
		j, err := r.item(res, o, rev, negotiate.Target{Format: negotiate.JSON, View: t.View, MetaVersion: t.MetaVersion})
		if err != nil {
			return nil, err
		}
		return codec.JSONToYAML(j)
	}
	obj, err := decoded(o, rev)
	if err != nil {
		return nil, err
	}
	v := map[string]any(obj)
	if t.View == negotiate.Partial {
		v = partialOf(obj, t)
	}
	var b []byte
	switch t.Format { // protobuf: enveloped
	case negotiate.JSON:
		b, err = jsonval.Marshal(v)
	case negotiate.CBOR:
		b, err = cbor.AppendValue(nil, v)
	}
	if err != nil {
		return nil, errInternal(fmt.Errorf("cannot encode %s as %s: %w", o.Key, t.Format, err))
	}
	return b, nil
}

// partialOf is obj's PartialObjectMetadata. It shares obj's metadata.
func partialOf(obj Object, t negotiate.Target) map[string]any {
	return map[string]any{"kind": "PartialObjectMetadata", "apiVersion": t.MetaAPIVersion(), "metadata": obj["metadata"]}
}

// typeMeta is what the protobuf envelope of an object in view t names.
func (res *Resource) typeMeta(t negotiate.Target, list bool) protobuf.TypeMeta {
	switch {
	case t.View == negotiate.Partial && list:
		return protobuf.TypeMeta{APIVersion: t.MetaAPIVersion(), Kind: "PartialObjectMetadataList"}
	case t.View == negotiate.Partial:
		return protobuf.TypeMeta{APIVersion: t.MetaAPIVersion(), Kind: "PartialObjectMetadata"}
	case list:
		return protobuf.TypeMeta{APIVersion: res.GroupVersion(), Kind: res.Kind + "List"}
	}
	return protobuf.TypeMeta{APIVersion: res.GroupVersion(), Kind: res.Kind}
}

// wrap turns an item into a whole response body.
func wrap(t negotiate.Target, tm protobuf.TypeMeta, item []byte) []byte {
	switch t.Format {
	case negotiate.Protobuf:
		return protobuf.AppendEnvelope(make([]byte, 0, len(item)+len(tm.APIVersion)+len(tm.Kind)+16), tm, item)
	case negotiate.CBOR:
		return append(append(make([]byte, 0, len(cbor.SelfDescribed)+len(item)), cbor.SelfDescribed...), item...)
	}
	return item
}

// writeStored answers with one stored object (Revision 0: a dry run's).
func (r *Registry) writeStored(w http.ResponseWriter, req *http.Request, code int, res *Resource, t negotiate.Target, o storage.Object) {
	if t.View == negotiate.WrongPartial {
		writeStatus(w, req, errWrongPartial(res, false))
		return
	}
	if t.View == negotiate.Table {
		r.writeTable(w, req, code, res, t, []storage.Object{o}, storage.ListResult{Revision: o.Revision}, false)
		return
	}
	if t.Format == negotiate.JSON && t.View == negotiate.Object && o.Revision != 0 {
		// The stored bytes with the resourceVersion spliced in (as item),
		// in a reused buffer: writers do not keep what they are given.
		bp := responses.Get().(*[]byte)
		b := jsonobj.AppendRV((*bp)[:0], o.Value, o.Revision)
		writeBody(w, req, code, t.Format, b)
		if cap(b) <= maxPooledBody {
			*bp = b[:0]
			responses.Put(bp)
		}
		return
	}
	if t.Format == negotiate.Protobuf {
		e, err := r.enveloped(res, o, o.Revision, t)
		if err != nil {
			r.writeError(w, req, err)
			return
		}
		writeBody(w, req, code, t.Format, e.body) // no copy: writers do not keep what they are given
		return
	}
	b, err := r.item(res, o, o.Revision, t)
	if err != nil {
		r.writeError(w, req, err)
		return
	}
	writeBody(w, req, code, t.Format, wrap(t, res.typeMeta(t, false), b))
}

// responses are writeStored's JSON body buffers.
var responses = sync.Pool{New: func() any { return new([]byte) }}

// writeList answers with a list page, assembled from the items' cached
// encodings: no item is encoded again for a second page, list or watcher.
func (r *Registry) writeList(w http.ResponseWriter, req *http.Request, res *Resource, t negotiate.Target, l storage.ListResult) {
	if t.View == negotiate.WrongPartial {
		writeStatus(w, req, errWrongPartial(res, true))
		return
	}
	if t.View == negotiate.Table {
		r.writeTable(w, req, http.StatusOK, res, t, l.Items, l, true)
		return
	}
	body, err := r.listBody(res, t, l)
	if err != nil {
		r.writeError(w, req, err)
		return
	}
	writeBody(w, req, http.StatusOK, t.Format, body)
}

func (r *Registry) listBody(res *Resource, t negotiate.Target, l storage.ListResult) ([]byte, error) {
	tm := res.typeMeta(t, true)
	if t.Format == negotiate.YAML { // a YAML list is the JSON list, converted
		jt := t
		jt.Format = negotiate.JSON
		j, err := r.listBody(res, jt, l)
		if err != nil {
			return nil, err
		}
		return codec.JSONToYAML(j)
	}
	if t.Format == negotiate.JSON && t.View == negotiate.Object {
		// The stored bytes, each with its resourceVersion spliced straight
		// into the list: no per-item copy.
		if res.typedList() {
			return appendJSONList(nil, tm, l, len(l.Items), true, func(dst []byte, i int) []byte {
				return jsonobj.AppendUntypedRV(dst, l.Items[i].Value, l.Items[i].Revision)
			}), nil
		}
		return appendJSONList(nil, tm, l, len(l.Items), false, func(dst []byte, i int) []byte {
			return jsonobj.AppendRV(dst, l.Items[i].Value, l.Items[i].Revision)
		}), nil
	}
	items := make([][]byte, len(l.Items))
	for i, it := range l.Items {
		b, err := r.item(res, it, it.Revision, t)
		if err != nil {
			return nil, err
		}
		items[i] = b
	}
	switch t.Format {
	case negotiate.Protobuf:
		raw := protobuf.AppendList(nil, protobuf.ListMeta{ResourceVersion: rv.Format(l.Revision), Continue: l.Continue, RemainingItemCount: l.Remaining}, items)
		return protobuf.AppendEnvelope(make([]byte, 0, len(raw)+64), tm, raw), nil
	case negotiate.CBOR:
		b, err := cbor.AppendList(nil, tm.Kind, tm.APIVersion, listMetaMap(l), items)
		if err != nil {
			return nil, errInternal(err)
		}
		return b, nil
	}
	return appendJSONList(nil, tm, l, len(items), res.typedList() || t.View == negotiate.Partial, func(dst []byte, i int) []byte { return append(dst, items[i]...) }), nil
}

// listMetaMap is a list's metadata in the JSON form.
func listMetaMap(l storage.ListResult) map[string]any {
	m := map[string]any{"resourceVersion": rv.Format(l.Revision)}
	if l.Continue != "" {
		m["continue"] = l.Continue
	}
	if l.Remaining != nil {
		m["remainingItemCount"] = *l.Remaining
	}
	return m
}

// typedList reports whether res's lists are encoded as kube encodes a
// built-in kind's (a typed list): items without apiVersion and kind, and
// no metadata.continue when there is no next page. A custom resource's
// list (kube's unstructured list) keeps both, and always has a continue
// ("").
func (res *Resource) typedList() bool { return !res.Custom }

// appendJSONList assembles a list of n JSON items; item appends the i-th.
// typed leaves out an empty continue (see typedList).
func appendJSONList(dst []byte, tm protobuf.TypeMeta, l storage.ListResult, n int, typed bool, item func(dst []byte, i int) []byte) []byte {
	size := 160 + len(l.Continue)
	for _, it := range l.Items {
		size += len(it.Value) + 48
	}
	if dst == nil {
		dst = make([]byte, 0, size)
	}
	dst = append(dst, `{"kind":`...)
	dst = strconv.AppendQuote(dst, tm.Kind)
	dst = append(dst, `,"apiVersion":`...)
	dst = strconv.AppendQuote(dst, tm.APIVersion)
	dst = append(dst, `,"metadata":{"resourceVersion":"`...)
	dst = rv.Append(dst, l.Revision)
	dst = append(dst, '"')
	if l.Continue != "" || !typed {
		dst = append(dst, `,"continue":`...)
		dst = strconv.AppendQuote(dst, l.Continue)
	}
	if l.Remaining != nil {
		dst = append(dst, `,"remainingItemCount":`...)
		dst = strconv.AppendInt(dst, *l.Remaining, 10)
	}
	dst = append(dst, `},"items":[`...)
	for i := range n {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = item(dst, i)
	}
	return append(dst, "]}"...)
}

// valueItem encodes a value that is not a stored object (a Status, a
// Scale, a Table, a bookmark, a discovery document) in format f, without
// envelope or tag; md is its protobuf message (nil: it has none, and
// protobuf is an error).
func valueItem(f negotiate.Format, md protoreflect.MessageDescriptor, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil || f == negotiate.JSON {
		return j, err
	}
	if f == negotiate.YAML {
		return codec.JSONToYAML(j)
	}
	m, err := decodeObject(j)
	if err != nil {
		return nil, err
	}
	switch {
	case f == negotiate.CBOR:
		return cbor.AppendValue(nil, map[string]any(m))
	case f == negotiate.Protobuf && md != nil:
		return protobuf.Marshal(md, m)
	}
	return nil, fmt.Errorf("this value has no %s form", f)
}

// encodeValue is valueItem as a whole response body, named tm in a
// protobuf envelope.
func encodeValue(f negotiate.Format, tm protobuf.TypeMeta, md protoreflect.MessageDescriptor, v any) ([]byte, error) {
	b, err := valueItem(f, md, v)
	if err != nil {
		return nil, err
	}
	return wrap(negotiate.Target{Format: f}, tm, b), nil
}

// writeValue answers with a value in the format the client prefers among
// JSON, YAML and CBOR.
func (r *Registry) writeValue(w http.ResponseWriter, req *http.Request, code int, v any) {
	t, err := pick(negotiate.ValueOffers, req)
	if err != nil {
		r.writeError(w, req, err)
		return
	}
	b, err := encodeValue(t.Format, protobuf.TypeMeta{}, nil, v)
	if err != nil {
		r.writeError(w, req, errInternal(err))
		return
	}
	writeBody(w, req, code, t.Format, b)
}

// writeError answers with err as a Status in the client's format.
func (r *Registry) writeError(w http.ResponseWriter, req *http.Request, err error) {
	writeStatus(w, req, toStatus(err, nil, ""))
}

var statusTypeMeta = protobuf.TypeMeta{APIVersion: "v1", Kind: "Status"}

// writeStatus writes a Status response, in the format the client accepts
// (JSON when it accepts none).
func writeStatus(w http.ResponseWriter, req *http.Request, err *StatusError) {
	writeStatusIn(w, req, negotiate.StatusFormat(req), err)
}

// writeStatusIn writes a Status response in format f.
func writeStatusIn(w http.ResponseWriter, req *http.Request, f negotiate.Format, err *StatusError) {
	s := err.Status
	if s.Details != nil && s.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(s.Details.RetryAfterSeconds))
	}
	b, e := encodeValue(f, statusTypeMeta, protobuf.Status, s)
	if e != nil {
		f, b = negotiate.JSON, mustJSON(s)
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	code := s.Code
	if code == 0 { // a success Status (a finished delete) has no code
		code = http.StatusOK
	}
	writeBody(w, req, code, f, b)
}

// gzipWriters recycles compressors; kube compresses at BestSpeed too.
var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return w
}}

// gzipThreshold is the body size above which a response is compressed for
// clients that accept gzip (kube-apiserver's 128 KiB).
const gzipThreshold = 128 << 10

// writeBody writes a whole response body: indented for pretty=true in
// JSON, gzip-compressed when large and the client accepts it.
func writeBody(w http.ResponseWriter, req *http.Request, code int, f negotiate.Format, b []byte) {
	if f == negotiate.JSON && req != nil && negotiate.Pretty(req) {
		var out bytes.Buffer
		if json.Indent(&out, b, "", "  ") == nil {
			out.WriteByte('\n')
			b = out.Bytes()
		}
	}
	h := w.Header()
	h.Set("Content-Type", negotiate.Types[f])
	if len(b) > gzipThreshold && req != nil && negotiate.AcceptsGzip(req) {
		h.Set("Content-Encoding", "gzip")
		h.Add("Vary", "Accept-Encoding")
		w.WriteHeader(code)
		gw := gzipWriters.Get().(*gzip.Writer)
		gw.Reset(w)
		gw.Write(b)
		gw.Close()
		gw.Reset(nil)
		gzipWriters.Put(gw)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(code)
	w.Write(b)
}
