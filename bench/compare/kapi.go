package compare

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/etcd3"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/watch"
)

// kapiPeer drives a kapi storage.Interface the way kapi's registry does
// for a Go caller (registry.Client): the object is encoded to JSON once on
// the way in (storage.MarshalMap: encoding/json's bytes; stored without its
// resourceVersion, with its labels and name/namespace fields beside it);
// every object a read or a watch hands back is the state's shared decoded
// form (storage.Object.Map), decoded once per object version whoever reads
// it (or given by the write that stored it), and a write hands back the
// caller's object at the new resourceVersion.
type kapiPeer struct {
	s     storage.Interface
	close func()
	// getMatch is the revision rule of Get: rv.MostRecent (a consistent
	// read), or rv.Any for a cache (the cacher column's resourceVersion=0).
	getMatch rv.Match
}

const kapiPrefix = "/example.com/widgets/"

func kapiKey(ns, name string) string { return kapiPrefix + ns + "/" + name }

// KapiMemory is kapi's in-memory MVCC store.
func KapiMemory() PeerInfo {
	return PeerInfo{
		Name: "kapi memory",
		What: "storage/memory; JSON encode in (storage.MarshalMap, encoding/json's bytes); reads and watches share one decode per object version (storage.Object.Map); a write sets the new resourceVersion on the caller's object and returns it (as controller-runtime's client does), and shares a deep copy of it (storage.Object.ShareMap)",
		Start: func(context.Context, *Etcd) (Peer, error) {
			return &kapiPeer{s: memory.New(memory.Options{}), close: func() {}, getMatch: rv.MostRecent}, nil
		},
	}
}

var etcdPrefixes atomic.Int64

// KapiEtcd3 is kapi's etcd3 backend on the shared embedded etcd.
func KapiEtcd3() PeerInfo {
	return PeerInfo{
		Name:      "kapi etcd3",
		What:      "storage/etcd3 on the embedded etcd; same encoding as kapi memory; a state this process wrote or saw in a watch event shares one Memo (the last 1024), other reads decode again",
		NeedsEtcd: true,
		Start: func(ctx context.Context, e *Etcd) (Peer, error) {
			s, err := etcd3.New(ctx, etcd3.Options{Client: e.Client, Prefix: fmt.Sprintf("/kapi-bench/%d", etcdPrefixes.Add(1))})
			if err != nil {
				return nil, err
			}
			return &kapiPeer{s: s, close: s.Close, getMatch: rv.MostRecent}, nil
		},
	}
}

func (p *kapiPeer) Close() { p.close() }

// toStored is what the store keeps of u: its JSON without the
// resourceVersion (taken out of u's metadata while it is encoded and put
// back, as the registry's encodeStored does), its labels and its
// name/namespace fields.
func toStored(u *unstructured.Unstructured) (storage.Object, error) {
	md, _ := u.Object["metadata"].(map[string]any)
	if old, had := md["resourceVersion"]; had {
		delete(md, "resourceVersion")
		defer func() { md["resourceVersion"] = old }()
	}
	b, err := storage.MarshalMap(u.Object)
	if err != nil {
		return storage.Object{}, err
	}
	return storage.Object{
		Key:    kapiKey(u.GetNamespace(), u.GetName()),
		Value:  b,
		UID:    string(u.GetUID()),
		Labels: u.GetLabels(),
		Fields: map[string]string{"metadata.name": u.GetName(), "metadata.namespace": u.GetNamespace()},
	}, nil
}

// fromStored hands out the state's shared decoded form (storage.Object.Map:
// one decode per object version for every reader and watcher), read-only
// as the cacher's and an informer's objects are: the scenarios deep-copy
// before changing an object.
func fromStored(o storage.Object, rev uint64, into *unstructured.Unstructured) error {
	o.Revision = rev
	m, err := o.Map()
	if err != nil {
		return err
	}
	into.Object = m
	return nil
}

func (p *kapiPeer) Create(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	o, err := toStored(u)
	if err != nil {
		return nil, err
	}
	out, err := p.s.Create(ctx, o)
	if err != nil {
		return nil, err
	}
	return written(u, out), nil
}

// written is what a write returns. The store keeps the caller's object
// unchanged but for its resourceVersion, so there is nothing to decode:
// the caller's object gets the write's resourceVersion and is handed back
// (controller-runtime's client, too, updates the object it was given),
// and a deep copy of it becomes the state's shared decoded form
// (ShareMap), which spares every reader of this version the decode. The
// copy shares no map or slice with the caller's object: whatever the
// caller does to its object later, readers do not see it.
func written(u *unstructured.Unstructured, out storage.Object) *unstructured.Unstructured {
	u.SetResourceVersion(strconv.FormatUint(out.Revision, 10))
	out.ShareMap(runtime.DeepCopyJSON(u.Object))
	return u
}

func (p *kapiPeer) Get(ctx context.Context, ns, name string) (*unstructured.Unstructured, error) {
	o, err := p.s.Get(ctx, kapiKey(ns, name), storage.GetOptions{Match: p.getMatch})
	if err != nil {
		return nil, err
	}
	res := &unstructured.Unstructured{}
	return res, fromStored(o, o.Revision, res)
}

func (p *kapiPeer) Update(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	rev, err := strconv.ParseUint(u.GetResourceVersion(), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("resourceVersion %q: %w", u.GetResourceVersion(), err)
	}
	o, err := toStored(u)
	if err != nil {
		return nil, err
	}
	out, err := p.s.GuaranteedUpdate(ctx, o.Key, storage.UpdateOptions{Preconditions: storage.Preconditions{Revision: rev}},
		func(storage.Object) (storage.Object, error) { return o, nil })
	if errors.Is(err, storage.ErrConflict) {
		return nil, ErrConflict
	}
	if err != nil {
		return nil, err
	}
	return written(u, out), nil
}

func (p *kapiPeer) List(ctx context.Context, opts ListOptions) (Page, error) {
	lo := storage.ListOptions{Match: rv.MostRecent, Limit: opts.Limit, Continue: opts.Continue}
	if opts.LabelSelector != "" {
		sel, err := storage.ParseLabelSelector(opts.LabelSelector)
		if err != nil {
			return Page{}, err
		}
		lo.Predicate.Label = sel
	}
	l, err := p.s.List(ctx, kapiPrefix, lo)
	if err != nil {
		return Page{}, err
	}
	page := Page{Items: make([]unstructured.Unstructured, len(l.Items)), ResourceVersion: strconv.FormatUint(l.Revision, 10), Continue: l.Continue}
	for i := range l.Items {
		m, err := l.Items[i].Map()
		if err != nil {
			return Page{}, err
		}
		page.Items[i].Object = m
	}
	return page, nil
}

func (p *kapiPeer) Watch(ctx context.Context, rvs string) (Watcher, error) {
	var rev uint64
	if rvs != "" {
		r, err := strconv.ParseUint(rvs, 10, 64)
		if err != nil {
			return nil, err
		}
		rev = r
	}
	w, err := p.s.Watch(ctx, kapiPrefix, storage.WatchOptions{Recursive: true, Revision: rev})
	if err != nil {
		return nil, err
	}
	return &kapiWatcher{w: w}, nil
}

type kapiWatcher struct{ w watch.Interface }

func (w *kapiWatcher) Stop() { w.w.Stop() }

func (w *kapiWatcher) Next() (*unstructured.Unstructured, bool) {
	for {
		ev, ok := <-w.w.ResultChan()
		if !ok || ev.Type == watch.Error {
			return nil, false
		}
		o, isObj := ev.Object.(storage.Object)
		if !isObj {
			continue // bookmark
		}
		u := &unstructured.Unstructured{}
		if err := fromStored(o, ev.Revision, u); err != nil {
			return nil, false
		}
		return u, true
	}
}
