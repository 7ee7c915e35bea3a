package patch

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kapi-dev/kapi/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/merge"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// ErrSchema is the class of an object that does not fit the resource's
// schema as structured-merge-diff reads it (a field the schema does not
// declare, a duplicate key in a list map, a string where a number belongs)
// or whose stored managedFields do not decode. kube-apiserver answers these
// with 500 Internal Server Error and the same message; the registry should
// prune and validate first, so that only its own bugs get here.
var ErrSchema = errors.New("patch: object does not fit the schema")

// FieldManager is server-side apply and managedFields tracking for one
// version of one resource, over JSON-form objects (map[string]any, numbers
// json.Number; int64 and float64 are accepted too). It is what
// k8s.io/apiserver's field manager does for a CustomResourceDefinition
// version: structured-merge-diff merges, and the same chain of steps
// (version check, last-applied upgrade for kubectl, tracking from the first
// apply, at most ten update managers, manager identifiers, operation
// times, stripped metadata) keeps metadata.managedFields.
//
// A FieldManager is immutable after NewFieldManager and safe for concurrent
// use. Build one per resource version and reuse it. What it derives from
// its schema alone is compiled once per *schema.Schema in the process and
// shared (compiledSchema), so registering the same schema in many
// registries (package builtin's, in every envtest Environment) costs
// little after the first.
type FieldManager struct {
	typ        typed.ParseableType
	apiVersion string
	kind       string
	// updaters per subresource ("" is the main resource); each ignores its
	// subresource's reset fields.
	updaters map[string]*updater
	any      *updater       // for subresources without reset fields
	keys     fieldKeys      // the schema's field names as fieldsV1 keys
	zero     map[string]any // a create's starting point (Zero, or Typed's); nil: {}
}

// FieldManagerOptions are the optional parts of a FieldManager.
type FieldManagerOptions struct {
	// Kind is the resource's kind; an apply configuration of another kind
	// is rejected. Empty: not checked (only apiVersion is).
	Kind string
	// ResetFields lists, per subresource ("" is the main resource), the
	// dotted field paths its writes reset rather than set, so no manager
	// of that subresource owns them: kube's strategies' GetResetFields.
	// For a CRD with a status subresource that is
	// {"": {"status"}, "status": {"metadata", "spec"}}.
	ResetFields map[string][]string
	// Zero is what a create's object is compared with besides apiVersion
	// and kind: the fields kube's zero value of a typed kind has when
	// empty, its non-pointer structs ({"spec": {}, "status": {}} for a
	// Namespace). The creator then owns what it sets in them, not the
	// structs themselves (no "." entry). Nil: nothing, as for custom
	// resources. Never modified.
	Zero map[string]any
	// Typed says the objects are of a kube Go type (a built-in kind), whose
	// field manager records a create as a change from the type's zero
	// value (typedzero.go, from the schema's markers) rather than from an
	// empty object; Zero, when set, is that value instead.
	Typed bool
}

// NewFieldManager returns the field manager of the resource version
// apiVersion ("group/version", or "v1" for the core group) whose objects s
// describes; a nil s is a resource without a schema (every map granular,
// every list atomic).
func NewFieldManager(s *schema.Schema, apiVersion string, opts FieldManagerOptions) (*FieldManager, error) {
	c, err := compiledSchemas.Get(s, compileSchema)
	if err != nil {
		return nil, fmt.Errorf("patch: field manager for %s: %w", apiVersion, err)
	}
	v := fieldpath.APIVersion(apiVersion)
	m := &FieldManager{typ: c.typ, apiVersion: apiVersion, kind: opts.Kind, zero: opts.Zero, updaters: map[string]*updater{}, keys: c.keys}
	if opts.Typed && m.zero == nil {
		m.zero = c.zero
	}
	safe := c.safe
	m.any = &updater{version: v, safe: safe}
	for sub, paths := range opts.ResetFields {
		set := fieldpath.NewSet()
		for _, p := range paths {
			var parts []any
			for _, f := range strings.Split(p, ".") {
				parts = append(parts, f)
			}
			fp, err := fieldpath.MakePath(parts...)
			if err != nil {
				return nil, fmt.Errorf("patch: reset field %q: %w", p, err)
			}
			set.Insert(fp)
		}
		m.updaters[sub] = &updater{version: v, filter: fieldpath.NewExcludeSetFilter(set), reset: set, safe: safe}
	}
	return m, nil
}

func (m *FieldManager) updater(subresource string) *updater {
	if u, ok := m.updaters[subresource]; ok {
		return u
	}
	return m.any
}

// ApplyOptions are the parameters of one server-side apply.
type ApplyOptions struct {
	Manager     string // fieldManager; the registry requires it for apply
	Force       bool
	Subresource string    // "" or e.g. "status"
	Now         time.Time // zero: time.Now()
	// Convert converts the object to the apiVersions of managers at
	// another version than the field manager's, so that their fields are
	// compared (conflicts, pruning, what they lose) in their own version,
	// as kube does (versions.go). Nil: every version is read as the
	// field manager's own.
	Convert ConvertFunc
}

// UpdateOptions are the parameters of one create, update or non-apply
// patch.
type UpdateOptions struct {
	Manager     string // fieldManager, or the registry's user-agent default; "" is "unknown"
	Subresource string
	Now         time.Time
	Convert     ConvertFunc // as ApplyOptions.Convert
}

func now(t time.Time) *time.Time {
	if t.IsZero() {
		t = time.Now()
	}
	t = t.UTC()
	return &t
}

// Apply merges config, an apply configuration, into live and returns the
// new object with its managedFields. A nil live is an apply that creates.
// Neither argument is modified. Errors: *ConflictError (ErrConflict, 409);
// *ConversionError when opts.Convert fails;
// *Error with ErrBadPatch (400) for a configuration of another
// apiVersion/kind or one carrying metadata.managedFields; ErrSchema (500).
//
// An apply that changes nothing returns live's content with the
// managedFields recomputed but the applier's time unchanged.
func (m *FieldManager) Apply(live, config map[string]any, opts ApplyOptions) (map[string]any, error) {
	entries, _ := managedFieldsOf(live)
	mg, err := decodeManaged(entries, false)
	if err != nil {
		return nil, &Error{Kind: ErrSchema, Msg: "failed to decode managed fields: " + err.Error()}
	}
	av, _ := config["apiVersion"].(string)
	kind, _ := config["kind"].(string)
	if av != m.apiVersion || m.kind != "" && kind != m.kind {
		return nil, &Error{Kind: ErrBadPatch, Msg: "invalid object type: " + gvkString(av, kind)}
	}
	if _, ok := managedFieldsOf(config); ok {
		return nil, &Error{Kind: ErrBadPatch, Msg: "metadata.managedFields must be nil"}
	}
	if live == nil {
		live = map[string]any{"apiVersion": av, "kind": kind}
	}
	liveTV, err := m.typ.FromUnstructured(toSMD(withoutManagedFields(live)), typed.AllowDuplicates)
	if err != nil {
		return nil, &Error{Kind: ErrSchema, Msg: fmt.Sprintf("failed to create typed live object (%s): %v", m.describe(live), err)}
	}
	cfg := toSMD(config).(map[string]any)
	cfgTV, err := m.typ.FromUnstructured(cfg)
	if err != nil {
		return nil, &Error{Kind: ErrSchema, Msg: fmt.Sprintf("failed to create typed patch object (%s): %v", m.describe(config), err)}
	}
	r := &request{m: m, u: m.updater(opts.Subresource), now: now(opts.Now), sub: opts.Subresource}
	if opts.Convert != nil && mg.otherVersion(m.apiVersion) {
		r.conv = &versions{convert: opts.Convert, sub: opts.Subresource}
	}
	obj, mg, err := r.applyUpgrading(liveTV, cfgTV, mg, opts.Manager, opts.Force, live)
	if err != nil {
		return nil, err
	}
	if opts.Manager == "kubectl" && hasLastApplied(obj) {
		setLastApplied(obj, buildLastApplied(cfg))
	}
	obj = fromSMD(obj).(map[string]any)
	setManagedFields(obj, mg.encode())
	return obj, nil
}

// Update records a create (live nil), update or non-apply patch: obj is
// the object about to be stored. It returns obj (a copy of its root and
// metadata; nested values are shared) with managedFields updated for
// opts.Manager as kube does:
//   - a request's own managedFields are taken when valid and non-empty
//     (that is how clients edit them), "[]" or "[{}]" resets them, anything
//     else keeps live's; a subresource request always keeps live's;
//   - an object without managedFields stays untracked on update; a create
//     is tracked from the start;
//   - the manager's Update entry (per manager, apiVersion, subresource)
//     gains the fields it changed and gets a new time only if it changed
//     something; other managers lose the fields it changed;
//   - beyond ten Update entries, the oldest merge into "ancient-changes".
//
// kube ignores Update's errors (they are bugs, or objects the schema does
// not fit): on error the returned object carries live's managedFields and
// the registry should store it anyway, as kube does.
func (m *FieldManager) Update(live, obj map[string]any, opts UpdateOptions) (map[string]any, error) {
	out := withoutManagedFields(obj)
	mg, err := m.decodeLiveOrNew(live, obj, opts.Subresource != "")
	if err == nil {
		err = m.update(live, out, mg, opts)
	}
	if err != nil {
		le, _ := managedFieldsOfRaw(live)
		setManagedFields(out, le)
		return out, err
	}
	return out, nil
}

func (m *FieldManager) update(live, out map[string]any, mg *managed, opts UpdateOptions) error {
	if len(mg.fields) == 0 && live != nil && uid(live) != "" {
		return nil // not tracked: kube starts tracking on create or first apply
	}
	created := live == nil
	if created {
		kind, _ := out["kind"].(string)
		if m.kind != "" {
			kind = m.kind
		}
		live = map[string]any{"apiVersion": m.apiVersion, "kind": kind}
	}
	r := &request{m: m, u: m.updater(opts.Subresource), now: now(opts.Now), sub: opts.Subresource}
	if created && len(mg.fields) == 0 {
		if fields, ok := createFields(m.typ.Schema, m.typ.TypeRef, m.keys, live, out, r.u.reset); ok {
			if m.zero != nil {
				dropZero(fields, m.zero, out)
			}
			setManagedFields(out, r.created(fields, opts.Manager))
			return nil
		}
	}
	if created && m.zero != nil {
		live = withZero(live, m.zero)
	}
	lw := withoutManagedFields(live)
	convert := opts.Convert != nil && mg.otherVersion(m.apiVersion) // none: compared at m's version alone
	var liveTV, newTV *typed.TypedValue
	var cmp func() (*typed.Comparison, error)
	if c, ok := compareJSON(m.typ.Schema, m.typ.TypeRef, lw, out); ok {
		// Both valid, compared: smd only reads live's type from here on.
		liveTV = view(lw, m.typ.Schema, m.typ.TypeRef)
		cmp = func() (*typed.Comparison, error) { return c, nil }
		if convert {
			nv, _ := smdView(out)
			newTV = view(nv, m.typ.Schema, m.typ.TypeRef)
		}
	} else {
		// Both are only read from here on: views, not copies.
		lv, _ := smdView(lw)
		liveV := lv.(map[string]any)
		var err error
		liveTV, err = m.typ.FromUnstructured(liveV, typed.AllowDuplicates)
		if err != nil {
			return &Error{Kind: ErrSchema, Msg: fmt.Sprintf("failed to convert live object (%s) to smd typed: %v", m.describe(live), err)}
		}
		// Validation looks at each value on its own, so what the new object
		// shares with the valid live one is valid: only the rest is checked
		// (same errors, same paths).
		nv, _ := smdView(out)
		newV := nv.(map[string]any)
		_, diff := changed(liveV, newV)
		if _, err := m.typ.FromUnstructured(diff, typed.AllowDuplicates); err != nil {
			return &Error{Kind: ErrSchema, Msg: fmt.Sprintf("failed to convert new object (%s) to smd typed: %v", m.describe(out), err)}
		}
		newTV = view(newV, m.typ.Schema, m.typ.TypeRef)
		cmp = func() (*typed.Comparison, error) { return compare(liveTV, newTV) }
	}
	var conv *versions
	if convert {
		conv = &versions{convert: opts.Convert, sub: opts.Subresource, live: liveTV, obj: newTV}
	}
	mg, err := r.update(conv, liveTV, cmp, mg, opts.Manager)
	if err != nil {
		return err
	}
	setManagedFields(out, mg.encode())
	return nil
}

// decodeLiveOrNew picks the managedFields an update starts from.
func (m *FieldManager) decodeLiveOrNew(live, obj map[string]any, subresource bool) (*managed, error) {
	fromLive := func() (*managed, error) {
		le, _ := managedFieldsOf(live)
		if mg, err := decodeManaged(le, false); err == nil {
			return mg, nil
		}
		return newManaged(), nil
	}
	if subresource {
		return fromLive()
	}
	ne, ok := managedFieldsOf(obj)
	if isReset(ne, ok) {
		return newManaged(), nil
	}
	mg, err := decodeManaged(ne, true)
	if err != nil || len(mg.fields) == 0 {
		return fromLive()
	}
	return mg, nil
}

// request is one Apply or Update going through kube's chain of managers.
type request struct {
	m    *FieldManager
	u    *updater
	now  *time.Time
	sub  string
	conv *versions // an apply's converter (ApplyOptions.Convert); nil: none
}

func (r *request) id(manager, op string) string {
	if manager == "" {
		manager = "unknown"
	}
	return managerID(managerKey{Manager: manager, Operation: op, APIVersion: r.m.apiVersion, Subresource: r.sub})
}

// update records an update of liveTV by manager, cmp comparing liveTV
// with the new object; conv (nil: none) converts for managers at other
// versions.
func (r *request) update(conv *versions, liveTV *typed.TypedValue, cmp func() (*typed.Comparison, error), mg *managed, manager string) (*managed, error) {
	const self = "current-operation"
	id := r.id(manager, OperationUpdate)
	fields, err := r.u.update(conv, liveTV, cmp, mg.fields, self)
	if err != nil {
		return nil, &Error{Kind: ErrSchema, Msg: "failed to update ManagedFields: " + err.Error()}
	}
	mg = &managed{fields: fields, times: mg.times, raw: mg.raw}
	mg.strip(self)
	if vs, ok := mg.fields[self]; ok {
		delete(mg.fields, self)
		if prev, ok := mg.fields[id]; ok {
			vs = fieldpath.NewVersionedSet(vs.Set().Union(prev.Set()), vs.APIVersion(), vs.Applied())
		}
		mg.fields[id] = vs
		mg.times[id] = r.now
	}
	mg.capUpdateManagers()
	return mg, nil
}

// applyUpgrading is kube's lastAppliedManager: a conflicting apply by
// "kubectl" is forced when every conflicting field is one the client-side
// apply annotation of live set to its current value.
func (r *request) applyUpgrading(liveTV, cfgTV *typed.TypedValue, mg *managed, manager string, force bool, live map[string]any) (map[string]any, *managed, error) {
	obj, out, err := r.apply(liveTV, cfgTV, mg.clone(), manager, force)
	var cs merge.Conflicts
	if !errors.As(err, &cs) {
		return obj, out, err
	}
	if manager != "kubectl" {
		return nil, nil, newConflictError(cs)
	}
	allowed, ok := r.allowedConflictsFromLastApplied(liveTV, live)
	if !ok {
		return nil, nil, newConflictError(cs)
	}
	var left merge.Conflicts
	for _, c := range cs {
		if !allowed.Has(c.Path) {
			left = append(left, c)
		}
	}
	if len(left) > 0 {
		return nil, nil, newConflictError(left)
	}
	obj, out, err = r.apply(liveTV, cfgTV, mg, manager, true)
	if errors.As(err, &cs) {
		return nil, nil, newConflictError(cs)
	}
	return obj, out, err
}

// apply is kube's chain below the last-applied steps: start tracking
// (before-first-apply), name the manager, merge, strip, stamp the time.
func (r *request) apply(liveTV, cfgTV *typed.TypedValue, mg *managed, manager string, force bool) (map[string]any, *managed, error) {
	if len(mg.fields) == 0 {
		empty := map[string]any{}
		for _, k := range []string{"apiVersion", "kind"} {
			if v, ok := cfgTV.AsValue().AsMap().Get(k); ok {
				empty[k] = v.Unstructured()
			}
		}
		emptyTV, err := r.m.typ.FromUnstructured(empty, typed.AllowDuplicates)
		if err != nil {
			return nil, nil, &Error{Kind: ErrSchema, Msg: "failed to create manager for existing fields: " + err.Error()}
		}
		cmp := func() (*typed.Comparison, error) { return compare(emptyTV, liveTV) }
		// No managers yet: none at another version.
		if mg, err = r.update(nil, emptyTV, cmp, mg, "before-first-apply"); err != nil {
			return nil, nil, fmt.Errorf("failed to create manager for existing fields: %w", err)
		}
	}
	id := r.id(manager, OperationApply)
	newTV, fields, err := r.u.apply(r.conv, liveTV, cfgTV, mg.fields, id, force)
	if err != nil {
		var cs merge.Conflicts
		if errors.As(err, &cs) {
			return nil, nil, cs
		}
		if cv := (*ConversionError)(nil); errors.As(err, &cv) {
			return nil, nil, &ConversionError{Msg: err.Error(), Err: cv.Err}
		}
		return nil, nil, &Error{Kind: ErrSchema, Msg: err.Error()}
	}
	mg = &managed{fields: fields, times: mg.times, raw: mg.raw}
	mg.strip(id)
	var obj map[string]any
	if newTV != nil {
		mg.times[id] = r.now
		obj, _ = newTV.AsValue().Unstructured().(map[string]any)
	} else {
		obj, _ = liveTV.AsValue().Unstructured().(map[string]any)
		obj = toSMD(obj).(map[string]any) // a copy: live's values are shared
	}
	if obj == nil {
		return nil, nil, &Error{Kind: ErrSchema, Msg: "the merged object is not an object"}
	}
	return obj, mg, nil
}

// withoutManagedFields returns obj with its root and metadata copied and
// metadata.managedFields removed (nil for nil).
func withoutManagedFields(obj map[string]any) map[string]any {
	if obj == nil {
		return nil
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		c := make(map[string]any, len(md))
		for k, v := range md {
			if k != "managedFields" {
				c[k] = v
			}
		}
		out["metadata"] = c
	}
	return out
}

// setManagedFields sets (or, for nil, removes) metadata.managedFields of
// obj, whose root and metadata the caller owns.
func setManagedFields(obj map[string]any, items []any) {
	md, ok := obj["metadata"].(map[string]any)
	if items == nil {
		if ok {
			delete(md, "managedFields")
		}
		return
	}
	if !ok {
		md = map[string]any{}
		obj["metadata"] = md
	}
	md["managedFields"] = items
}

func managedFieldsOfRaw(obj map[string]any) ([]any, bool) {
	md, _ := obj["metadata"].(map[string]any)
	items, ok := md["managedFields"].([]any)
	return items, ok
}

func uid(obj map[string]any) string {
	md, _ := obj["metadata"].(map[string]any)
	s, _ := md["uid"].(string)
	return s
}

// gvkString prints a group/version/kind as k8s.io/apimachinery does
// ("example.com/v1, Kind=Widget", "/v1, Kind=ConfigMap").
func gvkString(apiVersion, kind string) string {
	group, version := "", apiVersion
	if i := strings.IndexByte(apiVersion, '/'); i >= 0 {
		group, version = apiVersion[:i], apiVersion[i+1:]
		if strings.Contains(version, "/") {
			group, version = "", ""
		}
	}
	return group + "/" + version + ", Kind=" + kind
}

// describe names an object in error messages as kube's field manager does:
// "namespace/name; group/version, Kind=kind".
func (m *FieldManager) describe(obj map[string]any) string {
	md, _ := obj["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	ns, _ := md["namespace"].(string)
	av, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	return ns + "/" + name + "; " + gvkString(av, kind)
}

// created is the managedFields of a create whose manager's trie is fields
// (createFields): its Update entry stamped now, none for an empty trie.
func (r *request) created(fields map[string]any, manager string) []any {
	if len(fields) == 0 {
		return nil
	}
	if manager == "" {
		manager = "unknown"
	}
	k := managerKey{Manager: manager, Operation: OperationUpdate, APIVersion: r.m.apiVersion, Subresource: r.sub}
	return []any{entryItem(k, fields, r.now)}
}
