package registry

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kapi-dev/kapi/registry/admission"
	"github.com/kapi-dev/kapi/registry/internal/discovery"
	"github.com/kapi-dev/kapi/registry/request"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

// The CRD feed: kube's CRD controllers (naming, establishing, finalizer)
// and its CRD handler's storage map, as one watch on the stored
// CustomResourceDefinitions, handled one event at a time. For each CRD
// an event names, the feed reads the stored CRD and
//   - accepts its names unless another CRD of its group holds one
//     (status.acceptedNames, NamesAccepted with kube's reasons), and sets
//     Established once they are: one status write when anything changed;
//   - serves its kinds once its names are accepted: a Resource per served
//     version, registered, replaced (when the spec or the accepted names
//     changed) or unregistered, in one table change; the Resources are
//     those the CRD write's validation prepared when the stored CRD is
//     the one validated (validatedCRD), else built from the stored CRD;
//   - when it is being deleted, deletes every instance through the write
//     path (Terminating: InstanceDeletionInProgress, then
//     InstanceDeletionCompleted) and removes the cleanup finalizer,
//     which lets it go; an instance that stays (its own finalizers) makes
//     the feed look again a second later.
//
// A CRD write returns once its CRD is reconciled (AfterWrite → sync): the
// write's own goroutine reconciles it at once, taking its turn with the
// feed (one reconcile at a time), so the kinds of a created CRD are
// served when the 201 is sent without waiting for the watch to deliver
// the event to the feed's goroutine (and the scheduler to run both in
// turn); the feed then finds that revision's CRD reconciled already.
// The feed's own writes do not sync (they are made with feedWrite in
// their context).

// crdSyncTimeout bounds how long a CRD write waits for the feed.
const crdSyncTimeout = 5 * time.Second

// crdRetry is how soon the feed looks again at a CRD whose instances are
// not all gone.
const crdRetry = time.Second

type feedWriteKey struct{}

// crdFeed is the state of the feed.
type crdFeed struct {
	r    *Registry
	res  *Resource // the CRDs resource
	stop context.CancelFunc
	done sync.WaitGroup
	// retry receives the names of CRDs to look at again.
	retry chan string
	// synced is closed once the stored CRDs at start are handled.
	synced chan struct{}

	// turn is held (a token in it) by each reconcile: the feed's, or a
	// CRD write's own (sync).
	turn chan struct{}

	mu      sync.Mutex
	rev     uint64                           // the last revision handled
	changed chan struct{}                    // closed (and replaced) when rev changes
	crds    map[string]*crdServed            // by CRD name
	groups  map[string]map[string]*crdServed // the same, by group then name: whom a CRD's names may conflict with
	// validated are the resources the last validation of each CRD
	// prepared (validateCRD), for serve to take (prepared).
	validated map[string]*validatedCRD
}

// validatedCRD is what a CRD write's validation prepared: a Resource
// per served version, checked and compiled (schema, field manager, CEL
// rules), never registered. The CRD's uid and generation name the spec
// they were made from: every spec change bumps the generation before
// validation, and a create's uid is new; the validation's names are the
// spec's.
//
// Worked example: POST of widgets.example.com (uid u, generation 1)
// validates and prepares widgets v1 → validated["widgets.example.com"]
// = {u, 1, [widgets v1]}; the write's reconcile finds the stored CRD at
// u/1 with its names accepted as asked, and serves those resources
// (the storage version, converter and strategy set) instead of parsing
// and compiling the CRD again. Two validations at one uid and
// generation (a retried or dry-run write, two racing updates) leave
// resources nil: the feed cannot tell which spec was stored, and builds
// its own.
type validatedCRD struct {
	uid        string
	generation int64
	names      schema.Names
	resources  []*Resource
}

// maxValidated bounds validatedCRD entries (of writes that validated
// and then failed) kept at once.
const maxValidated = 256

// remember records the resources validation prepared for obj from crd.
func (f *crdFeed) remember(obj Object, crd schema.CRD, resources []*Resource) {
	if f == nil {
		return
	}
	v := &validatedCRD{uid: obj.UID(), generation: generation(obj), names: crd.Names, resources: resources}
	f.mu.Lock()
	defer f.mu.Unlock()
	if old := f.validated[obj.Name()]; old != nil && old.uid == v.uid && old.generation == v.generation {
		old.resources = nil
		return
	}
	if len(f.validated) >= maxValidated {
		for n := range f.validated {
			delete(f.validated, n)
			break
		}
	}
	f.validated[obj.Name()] = v
}

// prepared takes the resources validation prepared for the CRD name as
// stored (c), if they were made from its spec and its accepted names
// (a), and drops what validation left for this or an older generation.
func (f *crdFeed) prepared(name string, c *crdObject, a schema.Names) []*Resource {
	f.mu.Lock()
	defer f.mu.Unlock()
	v := f.validated[name]
	if v == nil || v.uid == c.Metadata.UID && v.generation > c.Metadata.Generation {
		return nil // none, or a write's not yet stored
	}
	delete(f.validated, name)
	n := v.names
	if v.uid != c.Metadata.UID || v.generation != c.Metadata.Generation || n.Plural != a.Plural || n.Singular != a.Singular ||
		n.Kind != a.Kind || n.ListKind != a.ListKind || !slices.Equal(n.ShortNames, a.ShortNames) || !slices.Equal(n.Categories, a.Categories) {
		return nil
	}
	return v.resources
}

// crdServed is what the feed knows of one CRD.
type crdServed struct {
	group    string
	accepted crdNames // its stored status.acceptedNames
	// fingerprint names the spec and accepted names the registered
	// resources were made from; "" when none are.
	fingerprint string
	ids         []string // the tableIDs registered
	// terminating is shared with the served resources' strategies: a
	// CRD being deleted refuses new instances.
	terminating *atomic.Bool
}

// startCRDs starts the feed; it returns once the CRDs stored at start
// are served (or crdSyncTimeout has passed).
func (r *Registry) startCRDs(res *Resource) {
	ctx, stop := context.WithCancel(context.Background())
	f := &crdFeed{r: r, res: res, stop: stop, retry: make(chan string, 16), synced: make(chan struct{}),
		changed: make(chan struct{}), crds: map[string]*crdServed{}, groups: map[string]map[string]*crdServed{}, turn: make(chan struct{}, 1),
		validated: map[string]*validatedCRD{}}
	r.crds = f
	f.done.Add(1)
	go func() {
		defer f.done.Done()
		f.run(ctx)
	}()
	select {
	case <-f.synced:
	case <-time.After(crdSyncTimeout):
		r.log.Warn("the stored CustomResourceDefinitions are not all served yet")
	}
}

// stopCRDs stops the feed and waits for it.
func (f *crdFeed) close() {
	if f != nil {
		f.stop()
		f.done.Wait()
	}
}

// feedContext is ctx with the feed's identity: its writes are made as
// kube-apiserver's loopback client, and are not synced (feedWrite).
func feedContext(ctx context.Context) context.Context {
	return request.WithUser(context.WithValue(ctx, feedWriteKey{}, true), apiserverUser)
}

func (f *crdFeed) run(ctx context.Context) {
	ctx = feedContext(ctx)
	for ctx.Err() == nil {
		w, err := f.r.store.Watch(ctx, f.res.keyPrefix(), storage.WatchOptions{Recursive: true, Initial: true, InitialEnd: true})
		if err != nil {
			f.r.log.Warn("the CRD feed cannot watch the store; retrying", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		f.follow(ctx, w)
		w.Stop()
	}
}

func (f *crdFeed) follow(ctx context.Context, w watch.Interface) {
	seen := map[string]bool{} // the initial state's CRDs, until its end
	for {
		select {
		case <-ctx.Done():
			return
		case name := <-f.retry:
			f.reconcileOne(ctx, name)
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type == watch.Error {
				return
			}
			if o, isObj := ev.Object.(storage.Object); isObj {
				name := o.Key[len(f.res.keyPrefix()):]
				if seen != nil {
					seen[name] = true
				}
				if ev.Type != watch.Deleted {
					var c crdObject
					if json.Unmarshal(o.Value, &c) == nil {
						f.note(name, &c)
					}
				}
				f.reconcileOne(ctx, name)
			}
			if ev.InitialEventsEnd && seen != nil {
				for name := range f.known() {
					if !seen[name] {
						f.reconcileOne(ctx, name) // gone while no watch ran
					}
				}
				seen = nil
				select {
				case <-f.synced:
				default:
					close(f.synced)
				}
			}
			f.mu.Lock()
			f.rev = max(f.rev, ev.Revision)
			close(f.changed)
			f.changed = make(chan struct{})
			f.mu.Unlock()
		}
	}
}

// note records a stored CRD's accepted names, which the names of the
// others of its group are checked against.
func (f *crdFeed) note(name string, c *crdObject) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.crds[name]
	if s == nil {
		s = &crdServed{terminating: &atomic.Bool{}}
		f.crds[name] = s
	}
	if s.group != c.Spec.Group {
		f.forgetGroup(name, s.group)
		if f.groups[c.Spec.Group] == nil {
			f.groups[c.Spec.Group] = map[string]*crdServed{}
		}
		f.groups[c.Spec.Group][name] = s
	}
	s.group, s.accepted = c.Spec.Group, c.Status.AcceptedNames
}

// forgetGroup removes the CRD name from group's index (f.mu held).
func (f *crdFeed) forgetGroup(name, group string) {
	if g := f.groups[group]; g != nil {
		delete(g, name)
		if len(g) == 0 {
			delete(f.groups, group)
		}
	}
}

func (f *crdFeed) known() map[string]bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]bool, len(f.crds))
	for n := range f.crds {
		out[n] = true
	}
	return out
}

// reconcileOne reconciles the CRD called name, in its turn.
func (f *crdFeed) reconcileOne(ctx context.Context, name string) {
	f.turn <- struct{}{}
	defer func() { <-f.turn }()
	f.reconcile(ctx, name)
}

// sync reconciles the CRD called name, stored at revision rev by a
// write of a client's, in the write's goroutine. Before the feed has
// handled the CRDs stored at start, or when the turn does not come
// within crdSyncTimeout (a reconcile held up, say, by an admission
// webhook that itself writes a CRD), it waits for the feed instead. The
// feed's own writes do not sync.
func (f *crdFeed) sync(ctx context.Context, name string, rev uint64) {
	if f == nil || ctx.Value(feedWriteKey{}) != nil {
		return
	}
	select {
	case <-f.synced:
	default:
		f.wait(ctx, rev)
		return
	}
	timeout := time.NewTimer(crdSyncTimeout)
	defer timeout.Stop()
	select {
	case f.turn <- struct{}{}:
	case <-timeout.C:
		f.wait(ctx, rev)
		return
	case <-ctx.Done():
		return
	}
	defer func() { <-f.turn }()
	f.reconcile(feedContext(context.WithoutCancel(ctx)), name)
}

// wait waits until the feed has handled revision rev (crdSyncTimeout at
// most); the feed's own writes do not wait.
func (f *crdFeed) wait(ctx context.Context, rev uint64) {
	if f == nil || ctx.Value(feedWriteKey{}) != nil {
		return
	}
	timeout := time.NewTimer(crdSyncTimeout)
	defer timeout.Stop()
	for {
		f.mu.Lock()
		ok, changed := f.rev >= rev, f.changed
		f.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		case <-timeout.C:
			f.r.log.Warn("a CustomResourceDefinition write returns before the CRD feed has handled it", "revision", rev)
			return
		}
	}
}

// reconcile brings the CRD called name, its status and its served kinds
// to agree with what is stored.
func (f *crdFeed) reconcile(ctx context.Context, name string) {
	cur, err := f.r.store.Get(ctx, f.res.objectKey("", name), storage.GetOptions{})
	if storage.IsNotFound(err) {
		f.unserve(name)
		return
	}
	if err != nil {
		f.r.log.Error("the CRD feed cannot read a CRD", "name", name, "err", err)
		return
	}
	var c crdObject
	if err := json.Unmarshal(cur.Value, &c); err != nil {
		f.r.log.Error("the CRD feed cannot decode a CRD", "name", name, "err", err)
		return
	}
	f.note(name, &c) // the names as stored before this reconcile's write; refreshed by its event
	st := c.Status
	st.Conditions = slices.Clone(st.Conditions)
	st.AcceptedNames.ShortNames = slices.Clone(st.AcceptedNames.ShortNames)
	st.AcceptedNames.Categories = slices.Clone(st.AcceptedNames.Categories)
	st.StoredVersions = slices.Clone(st.StoredVersions)
	accepted, namesCond, estCond := f.names(name, &c)
	if !c.Status.isTrue(condEstablished) && estCond.Status == condTrue {
		// kube's establishing controller: a webhook whose CA bundle
		// holds no certificate keeps the CRD from being established.
		if _, err := f.converter(&c); errors.Is(err, errInvalidCABundle) {
			estCond = crdCondition{Type: condEstablished, Status: condFalse, Reason: "InvalidCABundle", Message: "The conversion webhook CABundle is invalid"}
		}
	}
	st.AcceptedNames = accepted
	now := f.r.timestamp()
	st.setCondition(namesCond, now)
	st.setCondition(estCond, now)
	if !statusEqual(st, c.Status) {
		if err := f.writeStatus(ctx, name, c.Metadata.UID, st); err != nil {
			f.r.log.Warn("the CRD feed cannot write a CRD's status", "name", name, "err", err)
			return // the write's event brings it back
		}
		c.Status = st
	}
	f.mu.Lock()
	f.crds[name].accepted = st.AcceptedNames
	f.mu.Unlock()
	if st.isTrue(condEstablished) || st.isTrue(condNamesAccepted) && st.condition(condEstablished).Reason != "InvalidCABundle" {
		f.serve(name, &c, cur.Value)
	} else {
		f.unserve(name)
	}
	if c.Metadata.DeletionTimestamp != "" {
		f.mu.Lock()
		f.crds[name].terminating.Store(true)
		f.mu.Unlock()
		if slices.Contains(c.Metadata.Finalizers, crdCleanupFinalizer) {
			f.finalize(ctx, name, &c)
		}
	}
}

func statusEqual(a, b crdStatus) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// names is kube's naming controller: the accepted names of c, and its
// NamesAccepted and Established conditions.
func (f *crdFeed) names(name string, c *crdObject) (crdNames, crdCondition, crdCondition) {
	used, kinds := map[string]bool{}, map[string]bool{}
	f.mu.Lock()
	for n, s := range f.groups[c.Spec.Group] {
		if n == name {
			continue
		}
		for _, x := range append([]string{s.accepted.Plural, s.accepted.Singular}, s.accepted.ShortNames...) {
			used[x] = true
		}
		kinds[s.accepted.Kind], kinds[s.accepted.ListKind] = true, true
	}
	f.mu.Unlock()
	delete(used, "")
	delete(kinds, "")
	req, acc := c.Spec.Names, c.Status.AcceptedNames
	out := acc
	cond := crdCondition{Type: condNamesAccepted, Status: "Unknown"}
	conflict := func(reason string, err error) {
		cond.Status, cond.Reason, cond.Message = condFalse, reason, err.Error()
	}
	fresh := func(requested, accepted string, in map[string]bool) error {
		if requested == accepted || !in[requested] {
			return nil
		}
		return fmt.Errorf("%q is already in use", requested)
	}
	if err := fresh(req.Plural, acc.Plural, used); err != nil {
		conflict("PluralConflict", err)
	} else {
		out.Plural = req.Plural
	}
	if err := fresh(req.Singular, acc.Singular, used); err != nil {
		conflict("SingularConflict", err)
	} else {
		out.Singular = req.Singular
	}
	if !slices.Equal(req.ShortNames, acc.ShortNames) {
		var errs []string
		for _, s := range req.ShortNames {
			if slices.Contains(acc.ShortNames, s) {
				continue
			}
			if err := fresh(s, "", used); err != nil {
				errs = append(errs, err.Error())
			}
		}
		switch len(errs) {
		case 0:
			out.ShortNames = req.ShortNames
		case 1:
			conflict("ShortNamesConflict", errors.New(errs[0]))
		default:
			conflict("ShortNamesConflict", errors.New("["+strings.Join(errs, ", ")+"]"))
		}
	}
	if err := fresh(req.Kind, acc.Kind, kinds); err != nil {
		conflict("KindConflict", err)
	} else {
		out.Kind = req.Kind
	}
	if err := fresh(req.ListKind, acc.ListKind, kinds); err != nil {
		conflict("ListKindConflict", err)
	} else {
		out.ListKind = req.ListKind
	}
	out.Categories = req.Categories
	if cond.Status == "Unknown" {
		cond.Status, cond.Reason, cond.Message = condTrue, "NoConflicts", "no conflicts found"
	}
	est := crdCondition{Type: condEstablished, Status: condFalse, Reason: "NotAccepted", Message: "not all names are accepted"}
	if old := c.Status.condition(condEstablished); old != nil {
		est = *old
	}
	if est.Status != condTrue && cond.Status == condTrue {
		// kube's establishing controller follows at once on one server.
		est = crdCondition{Type: condEstablished, Status: condTrue, Reason: "InitialNamesAccepted", Message: "the initial names have been accepted"}
	}
	return out, cond, est
}

// writeStatus stores st as the status of the CRD name (with uid).
func (f *crdFeed) writeStatus(ctx context.Context, name, uid string, st crdStatus) error {
	_, err := f.update(ctx, name, "status", func(old Object) (Object, error) {
		if old.UID() != uid {
			return nil, errUnchanged
		}
		next := old.deepCopy()
		next["status"] = toJSONValue(st)
		return next, nil
	})
	return err
}

// update is one write of the feed's through the pipeline, as
// kube-apiserver's loopback client makes it.
func (f *crdFeed) update(ctx context.Context, name, sub string, edit func(old Object) (Object, error)) (storage.Object, error) {
	path := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + name
	parts := []string{"customresourcedefinitions", name}
	if sub != "" {
		path += "/" + sub
		parts = append(parts, sub)
	}
	ctx = request.WithInfo(ctx, &request.Info{IsResourceRequest: true, Verb: "update", APIPrefix: "apis", APIGroup: apiextensionsGroup,
		APIVersion: "v1", Resource: "customresourcedefinitions", Name: name, Subresource: sub, Path: path, Parts: parts})
	out, _, err := f.r.commit(ctx, &writeRequest{res: f.res, op: admission.Update, name: name, sub: sub,
		o: writeOptions{manager: "kube-apiserver"}, options: "UpdateOptions",
		object: func(old Object, _ storage.Object) (Object, error) { return edit(old) }})
	if errors.Is(err, errUnchanged) {
		return out, nil
	}
	return out, err
}

// serve registers (or replaces) the kinds of c, stored as value, unless
// they are served as they are.
func (f *crdFeed) serve(name string, c *crdObject, value []byte) {
	// The spec is named by its generation (which every change of the
	// spec bumps), or by its JSON when it has none.
	spec := []byte(strconv.FormatInt(c.Metadata.Generation, 10))
	if c.Metadata.Generation == 0 {
		spec, _ = json.Marshal(c.Spec)
	}
	names, _ := json.Marshal(c.Status.AcceptedNames)
	many := len(c.Status.StoredVersions) > 1 // a storage version is kept even with one version
	sum := sha256.Sum256(slices.Concat([]byte(c.Metadata.UID+"\x00"+strconv.FormatBool(many)+"\x00"), spec, []byte{0}, names))
	fp := string(sum[:])
	f.mu.Lock()
	s := f.crds[name]
	same := s.fingerprint == fp
	old, terminating := s.ids, s.terminating
	f.mu.Unlock()
	if same {
		return
	}
	a := c.Status.AcceptedNames
	accepted := schema.Names{Plural: a.Plural, Singular: a.Singular, Kind: a.Kind, ListKind: a.ListKind, ShortNames: a.ShortNames, Categories: a.Categories}
	if accepted.Singular == "" {
		accepted.Singular = toLower(a.Kind)
	}
	resources := f.prepared(name, c, accepted)
	compiled := resources != nil
	if !compiled {
		crd, err := schema.ParseCRD(value)
		if err != nil {
			f.r.log.Error("the CRD feed cannot serve a CRD", "name", name, "err", err)
			f.unserve(name)
			return
		}
		crd.Names = accepted
		resources = FromCRD(crd)
	}
	convert, err := f.converter(c)
	if err != nil {
		f.r.log.Error("the CRD feed cannot serve a CRD: its conversion webhook", "name", name, "err", err)
		f.unserve(name)
		return
	}
	storageVersion := ""
	if len(c.Spec.Versions) > 1 || len(c.Status.StoredVersions) > 1 {
		storageVersion = c.Spec.storageVersion()
	}
	ids := make([]string, len(resources))
	for i, res := range resources {
		res.StorageVersion, res.Convert = storageVersion, convert
		res.Warnings = deprecationWarnings(c, res.Version)
		res.Strategy.PrepareForCreate = func(_ context.Context, obj Object) error {
			if terminating.Load() {
				return newStatus(403, "Forbidden", fmt.Sprintf("%s %q is forbidden: create not allowed while custom resource definition is terminating", res.qualified(), obj.Name()),
					&StatusDetails{Name: obj.Name(), Group: res.Group, Kind: res.Plural})
			}
			return nil
		}
		if compiled {
			f.r.prepareConversion(res)
		} else if err := f.r.prepare(res); err != nil {
			f.r.log.Error("the CRD feed cannot serve a CRD", "name", name, "err", err)
			return
		}
		ids[i] = tableID(res.Group, res.Version, res.Plural)
	}
	if err := f.r.change(tableChange{remove: old, add: resources}); err != nil {
		f.r.log.Error("the CRD feed cannot serve a CRD", "name", name, "err", err)
		return
	}
	f.mu.Lock()
	s.fingerprint, s.ids = fp, ids
	f.mu.Unlock()
}

// converter is the ConvertFunc of c's conversion strategy: nil for None.
func (f *crdFeed) converter(c *crdObject) (ConvertFunc, error) {
	conv := c.Spec.Conversion
	if conv == nil || conv.Strategy != "Webhook" || conv.Webhook == nil {
		return nil, nil
	}
	return f.r.newConversionWebhook(conv.Webhook.ClientConfig)
}

// deprecationWarnings are the warnings of c's version v, as kube sends
// them on every request to a deprecated version.
func deprecationWarnings(c *crdObject, v string) []string {
	var dep *crdVersion
	for i := range c.Spec.Versions {
		if c.Spec.Versions[i].Name == v && c.Spec.Versions[i].Deprecated {
			dep = &c.Spec.Versions[i]
		}
	}
	if dep == nil {
		return nil
	}
	if dep.DeprecationWarning != nil {
		return []string{*dep.DeprecationWarning}
	}
	sp := c.Spec
	msg := fmt.Sprintf("%s/%s %s is deprecated", sp.Group, v, sp.Names.Kind)
	var better []string
	for _, o := range sp.Versions {
		if o.Served && !o.Deprecated && discovery.CompareVersions(o.Name, v) < 0 {
			better = append(better, o.Name)
		}
	}
	if len(better) > 0 {
		slices.SortFunc(better, discovery.CompareVersions)
		msg += fmt.Sprintf("; use %s/%s %s", sp.Group, better[0], sp.Names.Kind)
	}
	return []string{msg}
}

// unserve unregisters the kinds of the CRD called name, and forgets it
// when it is gone from storage.
func (f *crdFeed) unserve(name string) {
	f.mu.Lock()
	s := f.crds[name]
	var ids []string
	if s != nil {
		ids = s.ids
		s.ids, s.fingerprint = nil, ""
	}
	f.mu.Unlock()
	if len(ids) > 0 {
		if err := f.r.change(tableChange{remove: ids}); err != nil {
			f.r.log.Error("the CRD feed cannot stop serving a CRD", "name", name, "err", err)
		}
	}
	if _, err := f.r.store.Get(context.Background(), f.res.objectKey("", name), storage.GetOptions{}); storage.IsNotFound(err) {
		f.mu.Lock()
		if s := f.crds[name]; s != nil {
			f.forgetGroup(name, s.group)
		}
		delete(f.crds, name)
		f.mu.Unlock()
	}
}

// finalize is kube's CRD finalizer: every instance is deleted, then the
// cleanup finalizer removed.
func (f *crdFeed) finalize(ctx context.Context, name string, c *crdObject) {
	st := c.Status
	now := f.r.timestamp()
	st.setCondition(crdCondition{Type: condTerminating, Status: condTrue, Reason: "InstanceDeletionInProgress", Message: "CustomResource deletion is in progress"}, now)
	if err := f.writeStatus(ctx, name, c.Metadata.UID, st); err != nil {
		f.r.log.Warn("the CRD feed cannot write a CRD's status", "name", name, "err", err)
		return
	}
	if c.Status.isTrue(condEstablished) {
		left, err := f.deleteInstances(ctx, name, c)
		if err != nil || left > 0 {
			msg := fmt.Sprintf("could not confirm zero CustomResources remaining: %d left", left)
			reason := "InstanceDeletionCheck"
			if err != nil {
				msg, reason = fmt.Sprintf("could not issue all deletes: %v", err), "InstanceDeletionFailed"
			}
			st.setCondition(crdCondition{Type: condTerminating, Status: condTrue, Reason: reason, Message: msg}, f.r.timestamp())
			_ = f.writeStatus(ctx, name, c.Metadata.UID, st)
			time.AfterFunc(crdRetry, func() {
				select {
				case f.retry <- name:
				case <-ctx.Done():
				}
			})
			return
		}
		st.setCondition(crdCondition{Type: condTerminating, Status: condFalse, Reason: "InstanceDeletionCompleted", Message: "removed all instances"}, f.r.timestamp())
	} else {
		st.setCondition(crdCondition{Type: condTerminating, Status: condFalse, Reason: "NeverEstablished", Message: "resource was never established"}, f.r.timestamp())
	}
	if err := f.writeStatus(ctx, name, c.Metadata.UID, st); err != nil {
		f.r.log.Warn("the CRD feed cannot write a CRD's status", "name", name, "err", err)
		return
	}
	if len(c.Metadata.Finalizers) == 1 {
		// The write below deletes the CRD: its kinds stop being served
		// first, so a client that reads the CRD as gone finds them gone
		// too. Should the write not delete it (a finalizer added since),
		// its event serves them again.
		f.unserve(name)
	}
	_, err := f.update(ctx, name, "", func(old Object) (Object, error) {
		if old.UID() != c.Metadata.UID || !slices.Contains(old.Finalizers(), crdCleanupFinalizer) {
			return nil, errUnchanged
		}
		next := old.deepCopy()
		var l []any
		for _, x := range old.Finalizers() {
			if x != crdCleanupFinalizer {
				l = append(l, x)
			}
		}
		if l == nil {
			delete(next.Meta(), "finalizers")
		} else {
			next.Meta()["finalizers"] = l
		}
		return next, nil
	})
	if err != nil && !storage.IsNotFound(err) {
		f.r.log.Warn("the CRD feed cannot remove a CRD's finalizer", "name", name, "err", err)
	}
}

// deleteInstances deletes every stored instance of c through the write
// path, and tells how many are left (those with finalizers of their own).
func (f *crdFeed) deleteInstances(ctx context.Context, name string, c *crdObject) (int, error) {
	f.mu.Lock()
	ids := f.crds[name].ids
	f.mu.Unlock()
	if len(ids) == 0 {
		return 0, nil
	}
	res := f.r.tab.Load().resources[ids[0]]
	if res == nil {
		return 0, nil
	}
	list, err := f.r.store.List(ctx, res.keyPrefix(), storage.ListOptions{})
	if err != nil {
		return 0, err
	}
	ctx = request.WithUser(ctx, namespaceControllerUser)
	left := 0
	for _, it := range list.Items {
		ns, n := res.splitKey(it.Key)
		_, gone, err := f.r.delete(ctx, res, ns, n, deleteOptions{writeOptions: writeOptions{manager: controllerManager}})
		if err != nil && !storage.IsNotFound(err) {
			return 0, err
		}
		if err == nil && !gone {
			left++
		}
	}
	return left, nil
}
