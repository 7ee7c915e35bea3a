package cache_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// backend wraps a store to let tests hold back, break and refuse its
// watches, and count the reads that reach it.
type backend struct {
	storage.Interface
	gets, lists atomic.Int64

	mu      sync.Mutex
	held    chan struct{} // while non-nil, watch events wait for it to close
	refuse  error         // Watch fails with it while set
	watches []*relay
}

func (b *backend) Get(ctx context.Context, key string, o storage.GetOptions) (storage.Object, error) {
	b.gets.Add(1)
	return b.Interface.Get(ctx, key, o)
}

func (b *backend) List(ctx context.Context, prefix string, o storage.ListOptions) (storage.ListResult, error) {
	b.lists.Add(1)
	return b.Interface.List(ctx, prefix, o)
}

func (b *backend) Watch(ctx context.Context, key string, o storage.WatchOptions) (watch.Interface, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.refuse != nil {
		return nil, &storage.Error{Err: b.refuse, Key: key}
	}
	w, err := b.Interface.Watch(ctx, key, o)
	if err != nil {
		return nil, err
	}
	r := &relay{b: b, in: w, out: make(chan watch.Event), kill: make(chan error, 1), stop: make(chan struct{})}
	b.watches = append(b.watches, r)
	go r.run()
	return r, nil
}

// hold makes watch events wait until release is called.
func (b *backend) hold() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held = make(chan struct{})
}

func (b *backend) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held != nil {
		close(b.held)
		b.held = nil
	}
}

func (b *backend) gate() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}

// setRefuse makes Watch fail with err (nil: succeed again).
func (b *backend) setRefuse(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refuse = err
}

// breakWatches ends every open watch with an ERROR event carrying err.
func (b *backend) breakWatches(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range b.watches {
		select {
		case r.kill <- err:
		default:
		}
	}
	b.watches = nil
}

var errConnection = errors.New("test: connection reset")

// relay forwards a store's watch, waiting at the backend's gate, until
// it is stopped or killed.
type relay struct {
	b        *backend
	in       watch.Interface
	out      chan watch.Event
	kill     chan error
	stop     chan struct{}
	stopOnce sync.Once
}

func (r *relay) ResultChan() <-chan watch.Event { return r.out }
func (r *relay) Stop()                          { r.stopOnce.Do(func() { close(r.stop) }) }

func (r *relay) RequestBookmark() {
	if b, ok := r.in.(interface{ RequestBookmark() }); ok {
		b.RequestBookmark()
	}
}

func (r *relay) run() {
	defer close(r.out)
	defer r.in.Stop()
	for {
		var ev watch.Event
		select {
		case e, ok := <-r.in.ResultChan():
			if !ok {
				return
			}
			ev = e
		case err := <-r.kill:
			r.send(watch.Event{Type: watch.Error, Object: err})
			return
		case <-r.stop:
			return
		}
		// A kill queued before this event was taken wins, as a broken
		// connection passes on nothing after it: the tests write to the
		// store after breakWatches and must not see the cache get it.
		select {
		case err := <-r.kill:
			r.send(watch.Event{Type: watch.Error, Object: err})
			return
		default:
		}
		if g := r.b.gate(); g != nil {
			select {
			case <-g:
			case err := <-r.kill:
				r.send(watch.Event{Type: watch.Error, Object: err})
				return
			case <-r.stop:
				return
			}
		}
		if !r.send(ev) {
			return
		}
	}
}

func (r *relay) send(ev watch.Event) bool {
	select {
	case r.out <- ev:
		return true
	case <-r.stop:
		return false
	}
}
