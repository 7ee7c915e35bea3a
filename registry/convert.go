package registry

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"strings"
	"sync/atomic"

	"github.com/kapi-dev/kapi/registry/internal/jsonobj"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// Versions and conversion. The versions of a resource (the Resources of
// one group and plural, one per version) share one storage prefix; with
// StorageVersion set, objects are stored at that version and converted
// on every read, write, list and watch, as kube does for custom
// resources:
//
//	PUT /apis/stable.example.com/v1beta1/…/crontabs/a  (StorageVersion v1)
//	  → the pipeline runs at v1beta1 (defaults, validation by v1beta1's
//	    schema; the stored object read for the update is converted to
//	    v1beta1 first)
//	  → the result is converted to v1 and stored
//	  → the response, and a v1beta1 watcher's event, convert it back
//
// Convert does the work (nil is kube's None strategy: apiVersion
// rewritten, nothing else). A converted state is computed once per
// version: it is kept in the stored state's Memo, with a Memo of its own
// for its encodings, so every reader and watcher of one version shares
// one conversion and one encoding. A stored object already at the
// version asked for (its apiVersion says so) is not converted at all.

// ConvertFunc converts objects to apiVersion ("group/version"). It
// returns one object for each given, in order (it may change them in
// place), or an error, which answers 500 with its text, as kube reports a
// failed conversion. Only apiVersion, labels, annotations and the fields
// outside metadata may differ: the other metadata is restored as given.
type ConvertFunc func(ctx context.Context, objs []Object, apiVersion string) ([]Object, error)

// convertIDs numbers the converting resources, for their memo keys.
var convertIDs atomic.Uint64

// converts reports whether res converts objects (StorageVersion set).
func (res *Resource) converts() bool { return res.StorageVersion != "" }

// storageGroupVersion is the apiVersion objects of res are stored at.
func (res *Resource) storageGroupVersion() string {
	g := res.Group
	if res.StorageGroup != "" {
		g = res.StorageGroup
	}
	if g == "" || g == "core" {
		return res.StorageVersion
	}
	return g + "/" + res.StorageVersion
}

// storeFor is the store as res's verbs see it: the registry's, or a view
// that converts between res's version and its storage version.
func (r *Registry) storeFor(res *Resource) storage.Interface {
	if !res.converts() {
		return r.store
	}
	return convertingStore{Interface: r.store, res: res}
}

// convert converts objs to apiVersion with res.Convert (or None),
// restoring what a converter may not change.
func (res *Resource) convert(ctx context.Context, objs []Object, apiVersion string) ([]Object, error) {
	if res.Convert == nil {
		for _, o := range objs {
			o["apiVersion"] = apiVersion
		}
		return objs, nil
	}
	metas := make([]map[string]any, len(objs))
	for i, o := range objs {
		metas[i] = maps.Clone(o.Meta())
	}
	from, _ := objs[0]["apiVersion"].(string)
	gvk := from + ", Kind=" + res.Kind // kube's GroupVersionKind.String of the input
	out, err := res.Convert(ctx, objs, apiVersion)
	if err != nil {
		return nil, errInternal(fmt.Errorf("conversion webhook for %s failed: %w", gvk, err))
	}
	if len(out) != len(objs) {
		return nil, errInternal(fmt.Errorf("conversion webhook for %s returned %d objects, expected %d", gvk, len(out), len(objs)))
	}
	for i, o := range out {
		if got, _ := o["apiVersion"].(string); got != apiVersion {
			return nil, errInternal(fmt.Errorf("conversion webhook for %s returned invalid converted object at index %v: invalid groupVersion (expected %v, received %v)", gvk, i, apiVersion, got))
		}
		if got, _ := o["kind"].(string); got != res.Kind {
			return nil, errInternal(fmt.Errorf("conversion webhook for %s returned invalid converted object at index %v: invalid kind (expected %v, received %v)", gvk, i, res.Kind, got))
		}
		meta := maps.Clone(metas[i])
		m := o.Meta()
		for _, k := range []string{"labels", "annotations"} {
			if v, ok := m[k]; ok {
				meta[k] = v
			} else {
				delete(meta, k)
			}
		}
		o["metadata"] = meta
	}
	return out, nil
}

// at reports whether the stored value is at apiVersion already.
func at(value []byte, apiVersion string) bool {
	return bytes.HasPrefix(value, []byte(`{"apiVersion":"`+apiVersion+`"`))
}

// convertStored converts stored states to res's version: each once per
// state and version (in its Memo), the conversions still to do in one
// call.
func (res *Resource) convertStored(ctx context.Context, objs []storage.Object) error {
	gv := res.GroupVersion()
	var todo []int
	var in []Object
	for i, o := range objs {
		if o.Value == nil || at(o.Value, gv) {
			continue
		}
		if v, ok := o.Memo.Load(res.convertKey(o.Revision)); ok {
			objs[i] = v.(storage.Object)
			continue
		}
		obj, err := decodeStored(o.Value, o.Revision)
		if err != nil {
			continue // reads report it
		}
		res.defaultAtStoredVersion(obj)
		todo, in = append(todo, i), append(in, obj)
	}
	if len(todo) == 0 {
		return nil
	}
	out, err := res.convert(ctx, in, gv)
	if err != nil {
		return err
	}
	for j, i := range todo {
		o := objs[i]
		delete(out[j].Meta(), "resourceVersion")
		if res.Custom && res.Schema != nil {
			res.Schema.Prune(map[string]any(out[j])) // kube's schemaCoercingConverter
		}
		b, err := jsonobj.Encode(out[j])
		if err != nil {
			return errInternal(err)
		}
		converted := o
		converted.Value, converted.Memo = b, new(storage.Memo)
		// defaulted at its stored version already: withDefaults keeps it
		_, _ = converted.Memo.Do(storage.MemoKey{What: uint64(defaultsMemo)}, func() (any, error) { return b, nil })
		v, _ := o.Memo.Do(res.convertKey(o.Revision), func() (any, error) { return converted, nil })
		objs[i] = v.(storage.Object)
	}
	return nil
}

// defaultAtStoredVersion applies to obj, a stored object, the defaults of
// the schema of the version it is stored at, as kube's storage decoder
// does before converting it; the version read then prunes what its
// schema does not know and defaults nothing:
//
//	v1: {size: {default: 1}}; v2 (storage): preserve-unknown-fields
//	stored at v2 {spec: {anything: 1}}, read at v1  →  {spec: {}}
func (res *Resource) defaultAtStoredVersion(obj Object) {
	if res.version == nil {
		return
	}
	av, _ := obj["apiVersion"].(string)
	v := av[strings.LastIndexByte(av, '/')+1:]
	if src := res.version(v); src != nil && src.defaults != nil {
		src.defaults.ApplyDefaults(map[string]any(obj))
	}
}

func (res *Resource) convertKey(rev uint64) storage.MemoKey {
	return storage.MemoKey{Rev: rev, What: uint64(convertMemo) | res.convertID<<8}
}

// toStorageVersion converts a request object's storage form to the
// storage version.
func (res *Resource) toStorageVersion(ctx context.Context, o storage.Object) (storage.Object, error) {
	sgv := res.storageGroupVersion()
	if o.Value == nil || at(o.Value, sgv) {
		return o, nil
	}
	obj, err := decodeStored(o.Value, 0)
	if err != nil {
		return o, errInternal(err)
	}
	out, err := res.convert(ctx, []Object{obj}, sgv)
	if err != nil {
		return o, err
	}
	delete(out[0].Meta(), "resourceVersion")
	b, err := jsonobj.Encode(out[0])
	if err != nil {
		return o, errInternal(err)
	}
	o.Value = b
	return o, nil
}

// convertingStore is the store as a converting resource's verbs see it:
// objects at the resource's version in, at the storage version below.
type convertingStore struct {
	storage.Interface
	res *Resource
}

func (s convertingStore) one(ctx context.Context, o storage.Object, err error) (storage.Object, error) {
	if err != nil {
		return o, err
	}
	l := []storage.Object{o}
	if err := s.res.convertStored(ctx, l); err != nil {
		return o, err
	}
	return l[0], nil
}

func (s convertingStore) Create(ctx context.Context, obj storage.Object) (storage.Object, error) {
	obj, err := s.res.toStorageVersion(ctx, obj)
	if err != nil {
		return obj, err
	}
	out, err := s.Interface.Create(ctx, obj)
	return s.one(ctx, out, err)
}

func (s convertingStore) Get(ctx context.Context, key string, opts storage.GetOptions) (storage.Object, error) {
	o, err := s.Interface.Get(ctx, key, opts)
	return s.one(ctx, o, err)
}

func (s convertingStore) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	l, err := s.Interface.List(ctx, prefix, opts)
	if err != nil {
		return l, err
	}
	items := make([]storage.Object, len(l.Items)) // the store's slice may be shared
	copy(items, l.Items)
	l.Items = items
	return l, s.res.convertStored(ctx, l.Items)
}

func (s convertingStore) GuaranteedUpdate(ctx context.Context, key string, opts storage.UpdateOptions, fn storage.UpdateFunc) (storage.Object, error) {
	out, err := s.Interface.GuaranteedUpdate(ctx, key, opts, func(cur storage.Object) (storage.Object, error) {
		cur, err := s.one(ctx, cur, nil)
		if err != nil {
			return storage.Object{}, err
		}
		next, err := fn(cur)
		if err != nil {
			return next, err
		}
		return s.res.toStorageVersion(ctx, next)
	})
	return s.one(ctx, out, err)
}

func (s convertingStore) Delete(ctx context.Context, key string, opts storage.DeleteOptions) (storage.Object, error) {
	if validate := opts.Validate; validate != nil {
		opts.Validate = func(c storage.Object) error {
			c, err := s.one(ctx, c, nil)
			if err != nil {
				return err
			}
			return validate(c)
		}
	}
	out, err := s.Interface.Delete(ctx, key, opts)
	return s.one(ctx, out, err)
}

func (s convertingStore) Watch(ctx context.Context, key string, opts storage.WatchOptions) (watch.Interface, error) {
	w, err := s.Interface.Watch(ctx, key, opts)
	if err != nil {
		return w, err
	}
	cw := &convertingWatch{inner: w, ch: make(chan watch.Event), stop: make(chan struct{})}
	go cw.run(ctx, s.res) // ends with the inner watch, Stop or ctx
	if b, ok := w.(bookmarker); ok {
		return bookmarkingWatch{cw, b}, nil
	}
	return cw, nil
}

// convertingWatch converts the objects of a watch's events.
type convertingWatch struct {
	inner   watch.Interface
	ch      chan watch.Event
	stop    chan struct{}
	stopped atomic.Bool
}

func (w *convertingWatch) ResultChan() <-chan watch.Event { return w.ch }

func (w *convertingWatch) Stop() {
	if w.stopped.CompareAndSwap(false, true) {
		close(w.stop)
		w.inner.Stop()
	}
}

func (w *convertingWatch) run(ctx context.Context, res *Resource) {
	defer close(w.ch)
	for {
		var ev watch.Event
		var ok bool
		select {
		case <-w.stop:
			return
		case <-ctx.Done():
			return
		case ev, ok = <-w.inner.ResultChan():
			if !ok {
				return
			}
		}
		if o, isObj := ev.Object.(storage.Object); isObj {
			l := []storage.Object{o}
			if err := res.convertStored(ctx, l); err != nil {
				ev = watch.Event{Type: watch.Error, Revision: ev.Revision, Object: err}
			} else {
				ev.Object = l[0]
			}
		}
		select {
		case w.ch <- ev:
		case <-w.stop:
			return
		case <-ctx.Done():
			return
		}
		if ev.Type == watch.Error {
			return
		}
	}
}

// bookmarkingWatch is a convertingWatch of a watch that takes bookmark
// requests.
type bookmarkingWatch struct {
	*convertingWatch
	b bookmarker
}

func (w bookmarkingWatch) RequestBookmark() { w.b.RequestBookmark() }
