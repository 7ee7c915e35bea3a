package patch

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/internal/jsonval"
)

// The operations of a managedFields entry.
const (
	OperationApply  = "Apply"
	OperationUpdate = "Update"
)

// managed is the decoded metadata.managedFields of an object: field sets and
// times, both keyed by manager identifier (see managerID).
type managed struct {
	fields fieldpath.ManagedFields
	times  map[string]*time.Time // nil: the entry has no time
	// raw are decoded fieldsV1 tries, by manager identifier, that encode
	// reuses for a set equal to the one decoded (nil: none).
	raw map[string]rawFields
}

// rawFields is a fieldsV1 trie as decoded, exactly what setToFields
// writes for set.
type rawFields struct {
	set    *fieldpath.Set
	fields map[string]any
}

// reuseFields enables the reuse of decoded fieldsV1 (tests turn it off to
// check it changes nothing).
var reuseFields = true

func newManaged() *managed {
	return &managed{fields: fieldpath.ManagedFields{}, times: map[string]*time.Time{}}
}

func (m *managed) clone() *managed {
	c := &managed{fields: make(fieldpath.ManagedFields, len(m.fields)), times: make(map[string]*time.Time, len(m.times))}
	for k, v := range m.fields {
		c.fields[k] = v
	}
	for k, v := range m.times {
		c.times[k] = v
	}
	c.raw = m.raw // read only
	return c
}

// managerKey is what identifies a manager, encoded as JSON in kube's field
// order (ManagedFieldsEntry without time and fields; apiVersion empty for
// Apply). The JSON string is the key of fieldpath.ManagedFields, so map
// order, tie-breaks and conflict printing match kube-apiserver's.
type managerKey struct {
	Manager     string `json:"manager,omitempty"`
	Operation   string `json:"operation,omitempty"`
	APIVersion  string `json:"apiVersion,omitempty"`
	Subresource string `json:"subresource,omitempty"`
}

func managerID(k managerKey) string {
	if k.Operation == OperationApply {
		k.APIVersion = ""
	}
	if id, ok := plainManagerID(k); ok {
		return id
	}
	b, _ := json.Marshal(k) // cannot fail: strings only
	return string(b)
}

// fields are k's fields in their JSON order.
func (k *managerKey) fields() [4]struct {
	name string
	v    *string
} {
	return [4]struct {
		name string
		v    *string
	}{{"manager", &k.Manager}, {"operation", &k.Operation}, {"apiVersion", &k.APIVersion}, {"subresource", &k.Subresource}}
}

// plainManagerID is json.Marshal(k) for strings JSON writes as they are
// (printable ASCII but for what it escapes); ok is false otherwise.
func plainManagerID(k managerKey) (string, bool) {
	b := make([]byte, 0, 96)
	b = append(b, '{')
	for _, f := range k.fields() {
		if *f.v == "" {
			continue
		}
		if !plainJSON(*f.v) {
			return "", false
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, f.name...)
		b = append(b, `":"`...)
		b = append(b, *f.v...)
		b = append(b, '"')
	}
	b = append(b, '}')
	return string(b), true
}

// plainJSON reports whether encoding/json writes s as is between quotes.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

func parseManagerID(id string) (managerKey, bool) {
	if k, ok := parsePlainManagerID(id); ok {
		return k, true
	}
	var k managerKey
	return k, json.Unmarshal([]byte(id), &k) == nil
}

// parsePlainManagerID reads what plainManagerID writes; ok is false for
// anything else.
func parsePlainManagerID(id string) (managerKey, bool) {
	var k managerKey
	s, ok := strings.CutPrefix(id, "{")
	if !ok || strings.IndexByte(id, '\\') >= 0 {
		return k, false
	}
	first := true
	for _, f := range k.fields() {
		p := `"` + f.name + `":"`
		if !first {
			p = "," + p
		}
		rest, found := strings.CutPrefix(s, p)
		if !found {
			continue
		}
		end := strings.IndexByte(rest, '"')
		if end < 0 || end == 0 || !plainJSON(rest[:end]) {
			return k, false
		}
		*f.v, s, first = rest[:end], rest[end+1:], false
	}
	return k, s == "}"
}

// entry is one metadata.managedFields item, decoded as k8s.io/apimachinery's
// unstructured converter decodes a ManagedFieldsEntry.
type entry struct {
	managerKey
	Time       *time.Time
	FieldsType string
	FieldsV1   any // the raw JSON value; nil when absent or null
}

func (e *entry) zero() bool {
	return *e == entry{}
}

// managedFieldsOf reads metadata.managedFields as Unstructured's
// GetManagedFields does: ok is false ("nil") when the field is absent, not
// a list, or holds an item that does not decode as an entry.
func managedFieldsOf(obj map[string]any) (entries []entry, ok bool) {
	md, _ := obj["metadata"].(map[string]any)
	items, isList := md["managedFields"].([]any)
	if !isList {
		return nil, false
	}
	entries = make([]entry, 0, len(items))
	for _, it := range items {
		m, isMap := it.(map[string]any)
		if !isMap {
			return nil, false
		}
		var e entry
		for _, f := range [...]struct {
			k   string
			dst *string
		}{{"manager", &e.Manager}, {"operation", &e.Operation}, {"apiVersion", &e.APIVersion}, {"fieldsType", &e.FieldsType}, {"subresource", &e.Subresource}} {
			switch v := m[f.k].(type) {
			case nil:
			case string:
				*f.dst = v
			default:
				return nil, false
			}
		}
		switch v := m["time"].(type) {
		case nil:
		case string:
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return nil, false
			}
			e.Time = &t
		default:
			return nil, false
		}
		e.FieldsV1 = m["fieldsV1"]
		entries = append(entries, e)
	}
	return entries, true
}

// isReset reports whether managedFields asks for a reset: an empty list or
// a list of one empty entry.
func isReset(entries []entry, ok bool) bool {
	return ok && (len(entries) == 0 || len(entries) == 1 && entries[0].zero())
}

// decodeManaged validates and decodes entries as kube's DecodeManagedFields.
// With keepRaw, the fieldsV1 of entries that are what encode would write
// for their set are kept for encode to reuse (the caller's object may
// share them with the result).
func decodeManaged(entries []entry, keepRaw bool) (*managed, error) {
	mg := &managed{fields: make(fieldpath.ManagedFields, len(entries)), times: make(map[string]*time.Time, len(entries))}
	for i, e := range entries {
		switch e.Operation {
		case OperationApply, OperationUpdate:
		default:
			return nil, errors.New("operation must be `Apply` or `Update`")
		}
		if e.APIVersion == "" {
			return nil, errors.New("apiVersion must not be empty")
		}
		switch e.FieldsType {
		case "FieldsV1":
		case "":
			return nil, fmt.Errorf("missing fieldsType in managed fields entry %d", i)
		default:
			return nil, fmt.Errorf("invalid fieldsType %q in managed fields entry %d", e.FieldsType, i)
		}
		set := &fieldpath.Set{}
		var raw map[string]any
		if e.FieldsV1 != nil {
			fm, ok := e.FieldsV1.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("error decoding versioned set from entry %d: fieldsV1 is not an object", i)
			}
			s, canon, err := decodeFields(fm)
			if err != nil {
				return nil, fmt.Errorf("error decoding versioned set from entry %d: %v", i, err)
			}
			set = s
			if canon && keepRaw && reuseFields {
				raw = fm
			}
		}
		id := managerID(e.managerKey)
		if raw != nil {
			if mg.raw == nil {
				mg.raw = map[string]rawFields{}
			}
			mg.raw[id] = rawFields{set, raw}
		} else {
			delete(mg.raw, id)
		}
		mg.fields[id] = fieldpath.NewVersionedSet(set, fieldpath.APIVersion(e.APIVersion), e.Operation == OperationApply)
		mg.times[id] = e.Time
	}
	return mg, nil
}

// encode turns mg into metadata.managedFields items, sorted as kube sorts
// them: Apply before Update, then by time (seconds), manager, apiVersion,
// subresource. A nil result means "no managedFields".
func (mg *managed) encode() []any {
	if len(mg.fields) == 0 {
		return nil
	}
	type sorted struct {
		k    managerKey
		secs int64
		item map[string]any
	}
	all := make([]sorted, 0, len(mg.fields))
	for id, vs := range mg.fields {
		k, _ := parseManagerID(id)
		k.APIVersion = string(vs.APIVersion())
		if vs.Applied() {
			k.Operation = OperationApply
		}
		var fields map[string]any
		if r, ok := mg.raw[id]; ok && (r.set == vs.Set() || r.set.Equals(vs.Set())) {
			fields = r.fields
		} else {
			fields = setToFields(vs.Set())
		}
		var secs int64
		t := mg.times[id]
		if t != nil {
			secs = t.Unix()
		}
		all = append(all, sorted{k, secs, entryItem(k, fields, t)})
	}
	sort.Slice(all, func(i, j int) bool {
		p, q := all[i], all[j]
		switch {
		case p.k.Operation != q.k.Operation:
			return p.k.Operation < q.k.Operation
		case p.secs != q.secs:
			return p.secs < q.secs
		case p.k.Manager != q.k.Manager:
			return p.k.Manager < q.k.Manager
		case p.k.APIVersion != q.k.APIVersion:
			return p.k.APIVersion < q.k.APIVersion
		}
		return p.k.Subresource < q.k.Subresource
	})
	out := make([]any, len(all))
	for i, s := range all {
		out[i] = s.item
	}
	return out
}

// entryItem is the metadata.managedFields item of manager k (its
// apiVersion and operation as the entry has them) with a fieldsV1 trie
// and a time (nil: none).
func entryItem(k managerKey, fields map[string]any, t *time.Time) map[string]any {
	item := make(map[string]any, 7)
	item["apiVersion"], item["fieldsType"], item["fieldsV1"] = k.APIVersion, "FieldsV1", fields
	for _, f := range k.fields() {
		if *f.v != "" && f.name != "apiVersion" {
			item[f.name] = *f.v
		}
	}
	if t != nil {
		item["time"] = t.UTC().Format(time.RFC3339)
	}
	return item
}

// maxUpdateManagers is kube's DefaultMaxUpdateManagers; ancientChanges the
// manager the oldest update entries are merged into.
const (
	maxUpdateManagers = 10
	ancientChanges    = "ancient-changes"
)

// capUpdateManagers merges the oldest Update entries, per apiVersion, into
// an "ancient-changes" entry until at most maxUpdateManagers remain (kube's
// capManagersManager, step for step).
func (mg *managed) capUpdateManagers() {
	var updaters []string
	for id, vs := range mg.fields {
		if !vs.Applied() {
			updaters = append(updaters, id)
		}
	}
	if len(updaters) <= maxUpdateManagers {
		return
	}
	secs := func(id string) int64 {
		if t := mg.times[id]; t != nil {
			return t.Unix()
		}
		return 0
	}
	sort.Slice(updaters, func(i, j int) bool {
		if si, sj := secs(updaters[i]), secs(updaters[j]); si != sj {
			return si < sj
		}
		return updaters[i] < updaters[j]
	})
	first := map[string]string{} // apiVersion → first manager seen
	for i, n := 0, len(updaters); i < len(updaters) && n > maxUpdateManagers; i++ {
		id := updaters[i]
		vs := mg.fields[id]
		version := string(vs.APIVersion())
		bucket := managerID(managerKey{Manager: ancientChanges, Operation: OperationUpdate, APIVersion: version})
		f, ok := first[version]
		if !ok {
			first[version] = id
			continue
		}
		if _, ok := mg.fields[bucket]; !ok {
			mg.fields[bucket] = mg.fields[f]
			delete(mg.fields, f)
		}
		mg.fields[bucket] = fieldpath.NewVersionedSet(vs.Set().Union(mg.fields[bucket].Set()), vs.APIVersion(), vs.Applied())
		delete(mg.fields, id)
		n--
		mg.times[bucket] = mg.times[id]
	}
}

// stripSet are the paths no manager may own (kube's stripMetaManager).
var stripSet = fieldpath.NewSet(
	fieldpath.MakePathOrDie("apiVersion"),
	fieldpath.MakePathOrDie("kind"),
	fieldpath.MakePathOrDie("metadata"),
	fieldpath.MakePathOrDie("metadata", "name"),
	fieldpath.MakePathOrDie("metadata", "namespace"),
	fieldpath.MakePathOrDie("metadata", "creationTimestamp"),
	fieldpath.MakePathOrDie("metadata", "selfLink"),
	fieldpath.MakePathOrDie("metadata", "uid"),
	fieldpath.MakePathOrDie("metadata", "clusterName"),
	fieldpath.MakePathOrDie("metadata", "generation"),
	fieldpath.MakePathOrDie("metadata", "managedFields"),
	fieldpath.MakePathOrDie("metadata", "resourceVersion"),
)

func (mg *managed) strip(id string) {
	vs, ok := mg.fields[id]
	if !ok {
		return
	}
	if s := vs.Set().Difference(stripSet); s.Empty() {
		delete(mg.fields, id)
	} else {
		mg.fields[id] = fieldpath.NewVersionedSet(s, vs.APIVersion(), vs.Applied())
	}
}

// toSMD returns a deep copy of a JSON-form value in the forms smd reads:
// json.Number becomes int64 (or float64 when it is not an integer).
func toSMD(v any) any { return jsonval.Copy(v, jsonval.Number) }

// smdView is toSMD for values smd only reads: containers without a
// json.Number inside are shared rather than copied (ok reports a copy).
func smdView(v any) (out any, copied bool) {
	switch v := v.(type) {
	case map[string]any:
		var c map[string]any
		for k, e := range v {
			ce, cc := smdView(e)
			if cc && c == nil {
				c = make(map[string]any, len(v))
				for k2, e2 := range v {
					c[k2] = e2
				}
			}
			if c != nil {
				c[k] = ce
			}
		}
		if c == nil {
			return v, false
		}
		return c, true
	case []any:
		var c []any
		for i, e := range v {
			ce, cc := smdView(e)
			if cc && c == nil {
				c = append([]any(nil), v...)
			}
			if c != nil {
				c[i] = ce
			}
		}
		if c == nil {
			return v, false
		}
		return c, true
	case json.Number:
		return toSMD(v), true
	}
	return v, false
}

// fromSMD turns the numbers of v back into json.Number, in place for maps
// and lists (v must be owned by the caller).
func fromSMD(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = fromSMD(e)
		}
	case []any:
		for i, e := range x {
			x[i] = fromSMD(e)
		}
	case int64:
		return json.Number(strconv.FormatInt(x, 10))
	case int:
		return json.Number(strconv.Itoa(x))
	case float64:
		b, _ := json.Marshal(x)
		return json.Number(b)
	}
	return v
}
