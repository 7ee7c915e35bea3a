package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"weak"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/kapi-dev/kapi/registry/internal/jsonobj"
	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// Client reads and writes one resource in-process with the caller's own Go
// type T (any struct that marshals to the resource's JSON, such as a type
// with apimachinery's ObjectMeta). It runs the same code as the HTTP
// handlers (EXT-5): defaulting, validation, metadata, finalizers,
// resourceVersion semantics, without an HTTP round trip. Errors are
// *StatusError, as an HTTP client would see them.
//
// Get, List, Create and Update return objects the caller owns. Watch events
// are shared, as an informer's objects are: every watcher of a Client of
// the same T in this Registry gets the same *T for a given object version,
// decoded once. Deep-copy an event's object before changing it.
type Client[T any] struct {
	r                      *Registry
	group, version, plural string
	memo                   storage.MemoKey // What names T's shared watch objects; Rev is set per event
}

// NewClient returns a Client for the resource named by its group/version
// ("v1" for core) and plural.
func NewClient[T any](r *Registry, groupVersion, plural string) (*Client[T], error) {
	g, v, ok := strings.Cut(groupVersion, "/")
	if !ok {
		g, v = "", groupVersion
	}
	if r.resource(g, v, plural) == nil {
		return nil, fmt.Errorf("registry: no resource %s in %s", plural, groupVersion)
	}
	return &Client[T]{r: r, group: g, version: v, plural: plural, memo: storage.MemoKey{What: uint64(clientMemo) | r.clientTypes.id(reflect.TypeFor[T]())<<8}}, nil
}

// resource is the resource the Client reads and writes as the registry
// serves it now (it may have been replaced since NewClient), or a 404
// when it is no longer served.
func (c *Client[T]) resource() (*Resource, error) {
	res := c.r.resource(c.group, c.version, c.plural)
	if res == nil {
		return nil, errPathNotFound()
	}
	return res, nil
}

// typeIDs numbers Go types from 1, each once.
type typeIDs struct {
	mu  sync.Mutex
	ids map[reflect.Type]uint64
}

func (t *typeIDs) id(typ reflect.Type) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if id, ok := t.ids[typ]; ok {
		return id
	}
	if t.ids == nil {
		t.ids = map[reflect.Type]uint64{}
	}
	t.ids[typ] = uint64(len(t.ids)) + 1
	return t.ids[typ]
}

// ListOptions are the query options of List and Watch, with the meaning of
// the HTTP query parameters of the same names.
type ListOptions struct {
	LabelSelector        string
	FieldSelector        string
	ResourceVersion      string
	ResourceVersionMatch string
	Limit                int64
	Continue             string
	SendInitialEvents    *bool
	AllowWatchBookmarks  bool
}

func (o ListOptions) query() url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("labelSelector", o.LabelSelector)
	set("fieldSelector", o.FieldSelector)
	set("resourceVersion", o.ResourceVersion)
	set("resourceVersionMatch", o.ResourceVersionMatch)
	set("continue", o.Continue)
	if o.Limit > 0 {
		q.Set("limit", strconv.FormatInt(o.Limit, 10))
	}
	if o.SendInitialEvents != nil {
		q.Set("sendInitialEvents", strconv.FormatBool(*o.SendInitialEvents))
	}
	if o.AllowWatchBookmarks {
		q.Set("allowWatchBookmarks", "true")
	}
	return q
}

// List is one page of a list.
type List[T any] struct {
	Items              []T
	ResourceVersion    string
	Continue           string
	RemainingItemCount *int64
}

// decodeOptions are encoding/json's rules with one change: a field's JSON
// name must match exactly, as Kubernetes clients decode
// (sigs.k8s.io/json's case-sensitive Unmarshal). With a field tagged
// `json:"replicas"`, {"replicas":3} fills it and {"Replicas":3} does not.
var decodeOptions = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(), jsonv2.MatchCaseInsensitiveNames(false))

func decodeAs[T any](o storage.Object) (*T, error) {
	out := new(T)
	if err := jsonv2.Unmarshal(jsonobj.WithRV(o.Value, o.Revision), out, decodeOptions); err != nil {
		return nil, errInternal(fmt.Errorf("decoding %s into %T: %w", o.Key, out, err))
	}
	return out, nil
}

func encodeFrom[T any](obj *T) (Object, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, errBadRequest("cannot encode %T: %v", obj, err)
	}
	o, err := decodeObject(b)
	if err != nil {
		return nil, errBadRequest("%T does not encode to a JSON object: %v", obj, err)
	}
	return o, nil
}

// shared is o at revision rev (with the schema's defaults, as every read
// has them) decoded into the *T every watcher of this type shares.
func (c *Client[T]) shared(res *Resource, o storage.Object, rev uint64) (*T, error) {
	o.Revision = rev
	o = withDefaults(res, o)
	key := c.memo
	key.Rev = rev
	v, _ := o.Memo.Do(key, func() (any, error) { return new(weakObject[T]), nil })
	w := v.(*weakObject[T])
	w.mu.Lock() // watchers of one version wait for one decode
	defer w.mu.Unlock()
	if x := w.p.Value(); x != nil {
		return x, nil
	}
	x, err := decodeAs[T](o)
	if err != nil {
		return nil, err
	}
	w.p = weak.Make(x)
	return x, nil
}

// weakObject holds a version's shared *T while some watcher holds it: it
// costs no memory once every watcher has let go.
type weakObject[T any] struct {
	mu sync.Mutex
	p  weak.Pointer[T]
}

// Get reads one object at the latest revision.
func (c *Client[T]) Get(ctx context.Context, namespace, name string) (*T, error) {
	res, err := c.resource()
	if err != nil {
		return nil, err
	}
	o, err := c.r.get(ctx, res, namespace, name, storage.GetOptions{Match: rv.MostRecent})
	if err != nil {
		return nil, err
	}
	return decodeAs[T](o)
}

// List reads a page of objects; namespace "" lists across all namespaces.
func (c *Client[T]) List(ctx context.Context, namespace string, opts ListOptions) (*List[T], error) {
	res, err := c.resource()
	if err != nil {
		return nil, err
	}
	lq, err := parseListQuery(res, opts.query(), false, "")
	if err != nil {
		return nil, toStatus(err, res, "")
	}
	l, err := c.r.list(ctx, res, namespace, lq.storageOptions())
	if err != nil {
		return nil, err
	}
	out := &List[T]{ResourceVersion: rv.Format(l.Revision), Continue: l.Continue, RemainingItemCount: l.Remaining, Items: make([]T, 0, len(l.Items))}
	for _, it := range l.Items {
		x, err := decodeAs[T](it)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, *x)
	}
	return out, nil
}

// Create stores a new object and returns it as stored.
func (c *Client[T]) Create(ctx context.Context, namespace string, obj *T) (*T, error) {
	res, err := c.resource()
	if err != nil {
		return nil, err
	}
	o, err := encodeFrom(obj)
	if err != nil {
		return nil, err
	}
	out, err := c.r.create(c.r.withClock(ctx), res, namespace, o, writeOptions{})
	if err != nil {
		return nil, toStatus(err, res, o.Name()) // the edge: a hook's error becomes its Status
	}
	return decodeAs[T](out)
}

// Update replaces an object (a conflict if its resourceVersion is stale).
func (c *Client[T]) Update(ctx context.Context, namespace string, obj *T) (*T, error) {
	return c.update(ctx, namespace, obj, "")
}

// UpdateStatus replaces the status of an object with a status subresource.
func (c *Client[T]) UpdateStatus(ctx context.Context, namespace string, obj *T) (*T, error) {
	res, err := c.resource()
	if err != nil {
		return nil, err
	}
	if !res.Status {
		return nil, errPathNotFound()
	}
	return c.update(ctx, namespace, obj, "status")
}

func (c *Client[T]) update(ctx context.Context, namespace string, obj *T, sub string) (*T, error) {
	res, err := c.resource()
	if err != nil {
		return nil, err
	}
	o, err := encodeFrom(obj)
	if err != nil {
		return nil, err
	}
	out, err := c.r.update(c.r.withClock(ctx), res, namespace, o.Name(), sub, o, writeOptions{})
	if err != nil {
		return nil, toStatus(err, res, o.Name())
	}
	return decodeAs[T](out)
}

// Delete deletes an object, or starts its deletion if it has finalizers.
func (c *Client[T]) Delete(ctx context.Context, namespace, name string) error {
	res, err := c.resource()
	if err != nil {
		return err
	}
	_, _, err = c.r.delete(c.r.withClock(ctx), res, namespace, name, deleteOptions{})
	return toStatusOrNil(err, res, name)
}

// Event is a typed watch event. Object is nil for bookmarks.
type Event[T any] struct {
	Type            watch.EventType
	Object          *T
	ResourceVersion string
}

// Watch streams typed events until ctx is done, the store ends the
// watch, or the resource stops being served as it was (Replace,
// Unregister); the channel is then closed. An ERROR event, if any, is the last.
func (c *Client[T]) Watch(ctx context.Context, namespace string, opts ListOptions) (<-chan Event[T], error) {
	res, err := c.resource()
	if err != nil {
		return nil, err
	}
	lq, err := parseListQuery(res, opts.query(), true, "")
	if err != nil {
		return nil, toStatus(err, res, "")
	}
	wo, err := c.r.watchOptions(ctx, lq)
	if err != nil {
		return nil, toStatus(err, res, "")
	}
	wi, err := c.r.storeFor(res).Watch(ctx, res.collectionKey(namespace), wo)
	if err != nil {
		return nil, toStatus(err, res, "")
	}
	out := make(chan Event[T])
	go func() { // owned by this watch; ends with ctx or the store's watch
		defer close(out)
		defer wi.Stop()
		retired := res.retired
		var teardown <-chan time.Time
		for {
			var ev watch.Event
			var ok bool
			select {
			case <-ctx.Done():
				return
			case <-retired: // no longer served: the watch ends a moment later, as an HTTP watch
				retired, teardown = nil, time.After(retiredWatchGrace)
				continue
			case <-teardown:
				return
			case ev, ok = <-wi.ResultChan():
				if !ok {
					return
				}
			}
			te := Event[T]{Type: ev.Type, ResourceVersion: rv.Format(ev.Revision)}
			if so, isObj := ev.Object.(storage.Object); isObj {
				x, err := c.shared(res, so, ev.Revision)
				if err != nil {
					return
				}
				te.Object = x
			}
			select {
			case out <- te:
			case <-ctx.Done():
				return
			}
			if ev.Type == watch.Error {
				return
			}
		}
	}()
	return out, nil
}
