package compare

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	kwatch "k8s.io/apimachinery/pkg/watch"
	kstorage "k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/cacher"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// widgetScheme knows widgets as unstructured objects.
func widgetScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	s.AddKnownTypeWithName(WidgetGVK, &unstructured.Unstructured{})
	s.AddKnownTypeWithName(WidgetListGVK, &unstructured.UnstructuredList{})
	metav1.AddToGroupVersion(s, WidgetGVK.GroupVersion())
	return s
}

// kubeWatcher reads an apimachinery watch.Interface.
type kubeWatcher struct{ w kwatch.Interface }

func (w kubeWatcher) Stop() { w.w.Stop() }

func (w kubeWatcher) Next() (*unstructured.Unstructured, bool) {
	for {
		ev, ok := <-w.w.ResultChan()
		if !ok || ev.Type == kwatch.Error {
			return nil, false
		}
		if ev.Type == kwatch.Bookmark {
			continue
		}
		obj := ev.Object
		if c, isCached := obj.(runtime.CacheableObject); isCached {
			obj = c.GetObject() // the cacher's wrapper; a deep copy of the object
		}
		u, isU := obj.(*unstructured.Unstructured)
		if !isU {
			return nil, false
		}
		return u, true
	}
}

// --- client-go testing.ObjectTracker ---

type trackerPeer struct{ t k8stesting.ObjectTracker }

// Tracker is client-go's testing.ObjectTracker (what the fake clientsets
// use), driven directly. Get/List return deep copies; label selectors are
// applied after the list, as the fake clientset's reactor does.
func Tracker() PeerInfo {
	return PeerInfo{
		Name: "client-go ObjectTracker",
		What: "k8s.io/client-go/testing.NewObjectTracker; objects deep-copied in and out, no encoding",
		Start: func(context.Context, *Etcd) (Peer, error) {
			s := widgetScheme()
			return &trackerPeer{t: k8stesting.NewObjectTracker(s, serializer.NewCodecFactory(s).UniversalDecoder())}, nil
		},
	}
}

func (p *trackerPeer) Close() {}

func (p *trackerPeer) Create(_ context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if err := p.t.Create(WidgetGVR, u, u.GetNamespace()); err != nil {
		return nil, err
	}
	return u, nil
}

func (p *trackerPeer) Get(_ context.Context, ns, name string) (*unstructured.Unstructured, error) {
	o, err := p.t.Get(WidgetGVR, ns, name)
	if err != nil {
		return nil, err
	}
	return o.(*unstructured.Unstructured), nil
}

func (p *trackerPeer) Update(_ context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	err := p.t.Update(WidgetGVR, u, u.GetNamespace())
	if apierrors.IsConflict(err) {
		return nil, ErrConflict
	}
	if err != nil {
		return nil, err
	}
	return u, nil
}

func (p *trackerPeer) List(_ context.Context, opts ListOptions) (Page, error) {
	if opts.Limit > 0 || opts.Continue != "" {
		return Page{}, ErrUnsupported
	}
	o, err := p.t.List(WidgetGVR, WidgetGVK, "")
	if err != nil {
		return Page{}, err
	}
	l := o.(*unstructured.UnstructuredList)
	if opts.LabelSelector != "" {
		sel, err := labels.Parse(opts.LabelSelector)
		if err != nil {
			return Page{}, err
		}
		kept := l.Items[:0]
		for _, it := range l.Items {
			if sel.Matches(labels.Set(it.GetLabels())) {
				kept = append(kept, it)
			}
		}
		l.Items = kept
	}
	return Page{Items: l.Items, ResourceVersion: l.GetResourceVersion()}, nil
}

func (p *trackerPeer) Watch(context.Context, string) (Watcher, error) {
	w, err := p.t.Watch(WidgetGVR, "")
	if err != nil {
		return nil, err
	}
	return kubeWatcher{w}, nil
}

// --- controller-runtime fake client ---

type ctrlPeer struct{ c ctrlclient.WithWatch }

// ControllerRuntimeFake is controller-runtime's fake client
// (fake.NewClientBuilder) with widgets as unstructured objects.
func ControllerRuntimeFake() PeerInfo {
	return PeerInfo{
		Name: "controller-runtime fake",
		What: "sigs.k8s.io/controller-runtime/pkg/client/fake; JSON round trip per call inside the fake",
		Start: func(context.Context, *Etcd) (Peer, error) {
			return &ctrlPeer{c: fake.NewClientBuilder().WithScheme(widgetScheme()).Build()}, nil
		},
	}
}

func (p *ctrlPeer) Close() {}

func (p *ctrlPeer) Create(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if err := p.c.Create(ctx, u); err != nil {
		return nil, err
	}
	return u, nil
}

func (p *ctrlPeer) Get(ctx context.Context, ns, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(WidgetGVK)
	if err := p.c.Get(ctx, ctrlclient.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		return nil, err
	}
	return u, nil
}

func (p *ctrlPeer) Update(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	err := p.c.Update(ctx, u)
	if apierrors.IsConflict(err) {
		return nil, ErrConflict
	}
	if err != nil {
		return nil, err
	}
	return u, nil
}

func (p *ctrlPeer) List(ctx context.Context, opts ListOptions) (Page, error) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(WidgetListGVK)
	lo := &ctrlclient.ListOptions{Limit: opts.Limit, Continue: opts.Continue}
	if opts.LabelSelector != "" {
		sel, err := labels.Parse(opts.LabelSelector)
		if err != nil {
			return Page{}, err
		}
		lo.LabelSelector = sel
	}
	if err := p.c.List(ctx, l, lo); err != nil {
		return Page{}, err
	}
	return Page{Items: l.Items, ResourceVersion: l.GetResourceVersion(), Continue: l.GetContinue()}, nil
}

func (p *ctrlPeer) Watch(ctx context.Context, rv string) (Watcher, error) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(WidgetListGVK)
	w, err := p.c.Watch(ctx, l, &ctrlclient.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
	if err != nil {
		return nil, err
	}
	return kubeWatcher{w}, nil
}

// --- k8s.io/apiserver storage (etcd3 store, cacher) ---

type apiserverPeer struct {
	s     kstorage.Interface
	close func()
	// getRV is the resourceVersion of Get: "" reads etcd, "0" lets the
	// cacher answer from its cache.
	getRV string
}

const kubeResourcePrefix = "/widgets"

func kubeKey(ns, name string) string { return kubeResourcePrefix + "/" + ns + "/" + name }

var kubePrefixes atomic.Int64

func newKubeEtcd3(e *Etcd) (kstorage.Interface, factory.DestroyFunc, error) {
	cfg := storagebackend.NewDefaultConfig(fmt.Sprintf("/kube-bench-%d", kubePrefixes.Add(1)), unstructured.UnstructuredJSONScheme)
	cfg.Transport.ServerList = []string{e.Endpoint}
	cfg.CompactionInterval = 0
	cfg.DBMetricPollInterval = 0
	gr := schema.GroupResource{Group: WidgetGVR.Group, Resource: WidgetGVR.Resource}
	return factory.Create(*cfg.ForResource(gr), newWidget, newWidgetList, kubeResourcePrefix)
}

func newWidget() runtime.Object {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(WidgetGVK)
	return u
}

func newWidgetList() runtime.Object {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(WidgetListGVK)
	return l
}

// KubeEtcd3 is k8s.io/apiserver's etcd3 store (storagebackend/factory) on
// the embedded etcd, with the unstructured JSON codec (what
// apiextensions-apiserver uses for custom resources).
func KubeEtcd3() PeerInfo {
	return PeerInfo{
		Name:      "apiserver etcd3",
		What:      "k8s.io/apiserver storage/etcd3 via storagebackend/factory, unstructured JSON codec; reads are quorum reads",
		NeedsEtcd: true,
		Start: func(_ context.Context, e *Etcd) (Peer, error) {
			s, destroy, err := newKubeEtcd3(e)
			if err != nil {
				return nil, err
			}
			return &apiserverPeer{s: s, close: destroy}, nil
		},
	}
}

// KubeCacher is k8s.io/apiserver's watch cache (storage/cacher, through
// the CacheDelegator the registry uses) in front of KubeEtcd3.
func KubeCacher() PeerInfo {
	return PeerInfo{
		Name:      "apiserver cacher",
		What:      "k8s.io/apiserver storage/cacher (CacheDelegator) over its etcd3 store; get with resourceVersion=0 (from cache), lists consistent from cache",
		NeedsEtcd: true,
		Start: func(ctx context.Context, e *Etcd) (Peer, error) {
			s, destroy, err := newKubeEtcd3(e)
			if err != nil {
				return nil, err
			}
			c, err := cacher.NewCacherFromConfig(cacher.Config{
				Storage:        s,
				Versioner:      kstorage.APIObjectVersioner{},
				GroupResource:  schema.GroupResource{Group: WidgetGVR.Group, Resource: WidgetGVR.Resource},
				ResourcePrefix: kubeResourcePrefix,
				KeyFunc: func(o runtime.Object) (string, error) {
					return kstorage.NamespaceKeyFunc(kubeResourcePrefix+"/", o)
				},
				GetAttrsFunc: kstorage.DefaultNamespaceScopedAttr,
				NewFunc:      newWidget,
				NewListFunc:  newWidgetList,
				Codec:        unstructured.UnstructuredJSONScheme,
				Clock:        clock.RealClock{},
				// The smallest window the cacher accepts (kube-apiserver's default).
				EventsHistoryWindow: 75 * time.Second,
			})
			if err != nil {
				destroy()
				return nil, err
			}
			if err := c.Wait(ctx); err != nil {
				c.Stop()
				destroy()
				return nil, err
			}
			d := cacher.NewCacheDelegator(c, s)
			return &apiserverPeer{s: d, getRV: "0", close: func() { d.Stop(); c.Stop(); destroy() }}, nil
		},
	}
}

func (p *apiserverPeer) Close() { p.close() }

func (p *apiserverPeer) Create(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out := &unstructured.Unstructured{}
	if err := p.s.Create(ctx, kubeKey(u.GetNamespace(), u.GetName()), u, out, 0); err != nil {
		return nil, err
	}
	return out, nil
}

func (p *apiserverPeer) Get(ctx context.Context, ns, name string) (*unstructured.Unstructured, error) {
	out := &unstructured.Unstructured{}
	if err := p.s.Get(ctx, kubeKey(ns, name), kstorage.GetOptions{ResourceVersion: p.getRV}, out); err != nil {
		return nil, err
	}
	return out, nil
}

// errStale is returned by the update function when the caller's
// resourceVersion is not the current one (what the registry's rest.Update
// does).
var errStale = fmt.Errorf("stale resourceVersion: %w", ErrConflict)

func (p *apiserverPeer) Update(ctx context.Context, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out := &unstructured.Unstructured{}
	want := u.GetResourceVersion()
	err := p.s.GuaranteedUpdate(ctx, kubeKey(u.GetNamespace(), u.GetName()), out, false, nil,
		func(cur runtime.Object, _ kstorage.ResponseMeta) (runtime.Object, *uint64, error) {
			if cur.(*unstructured.Unstructured).GetResourceVersion() != want {
				return nil, nil, errStale
			}
			next := u.DeepCopy()
			next.SetResourceVersion("")
			return next, nil, nil
		}, nil)
	if err == errStale || kstorage.IsConflict(err) {
		return nil, ErrConflict
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (p *apiserverPeer) List(ctx context.Context, opts ListOptions) (Page, error) {
	pred := kstorage.SelectionPredicate{
		Label: labels.Everything(), Field: fields.Everything(),
		Limit: opts.Limit, Continue: opts.Continue,
		GetAttrs: kstorage.DefaultNamespaceScopedAttr,
	}
	if opts.LabelSelector != "" {
		sel, err := labels.Parse(opts.LabelSelector)
		if err != nil {
			return Page{}, err
		}
		pred.Label = sel
	}
	l := newWidgetList().(*unstructured.UnstructuredList)
	if err := p.s.GetList(ctx, kubeResourcePrefix, kstorage.ListOptions{Recursive: true, Predicate: pred}, l); err != nil {
		return Page{}, err
	}
	return Page{Items: l.Items, ResourceVersion: l.GetResourceVersion(), Continue: l.GetContinue()}, nil
}

func (p *apiserverPeer) Watch(ctx context.Context, rv string) (Watcher, error) {
	w, err := p.s.Watch(ctx, kubeResourcePrefix, kstorage.ListOptions{ResourceVersion: rv, Recursive: true, Predicate: kstorage.Everything})
	if err != nil {
		return nil, err
	}
	return kubeWatcher{w}, nil
}
