package schema

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// crdDoc is the part of an apiextensions.k8s.io/v1 CustomResourceDefinition
// kapi reads; other fields (status, conversion, annotations) are ignored.
type crdDoc struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Group                 string     `json:"group"`
		Names                 Names      `json:"names"`
		Scope                 string     `json:"scope"`
		Versions              []crdVersn `json:"versions"`
		PreserveUnknownFields bool       `json:"preserveUnknownFields"`
	} `json:"spec"`
}

type crdVersn struct {
	Name       string `json:"name"`
	Served     bool   `json:"served"`
	Storage    bool   `json:"storage"`
	Deprecated bool   `json:"deprecated"`
	Schema     *struct {
		OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
	} `json:"schema"`
	Subresources *struct {
		Status *json.RawMessage `json:"status"`
		Scale  *Scale           `json:"scale"`
	} `json:"subresources"`
	AdditionalPrinterColumns []Column `json:"additionalPrinterColumns"`
	SelectableFields         []struct {
		JSONPath string `json:"jsonPath"`
	} `json:"selectableFields"`
}

// ParseCRDs reads apiextensions.k8s.io/v1 CustomResourceDefinitions from
// YAML (documents separated by "---" lines) or JSON (one object, or a
// List of them), as kubebuilder's config/crd/bases files hold them.
// Empty documents and documents of other kinds (a kustomization.yaml, a
// Namespace) are skipped; a CustomResourceDefinition of another version
// (v1beta1) or one that kube would refuse in a way that breaks serving is
// an *Error naming the CRD. Checked, as kube's validation does:
//   - metadata.name is "<plural>.<group>", the group a domain with a dot;
//   - names.plural and names.kind are present, plural and singular are
//     lowercase DNS labels, kind and listKind differ;
//   - scope is Namespaced or Cluster; spec.preserveUnknownFields is false;
//   - versions are present with unique names, exactly one is the storage
//     version, at least one is served, each has a schema.openAPIV3Schema
//     that FromJSON accepts;
//   - scale paths are present (specReplicasPath under .spec,
//     statusReplicasPath under .status); printer columns have a name, a
//     type (integer, number, string, boolean, date) and a jsonPath;
//     selectable fields have a jsonPath;
//   - a CRD name appears once.
//
// Defaults, as the API server sets them: names.singular is the lowercase
// kind, names.listKind is kind + "List". Columns and scale keep their
// JSON paths as written (".spec.replicas"); selectable fields lose the
// leading dot ("spec.color").
func ParseCRDs(b []byte) ([]CRD, error) {
	var out []CRD
	seen := map[string]bool{}
	for i, doc := range splitYAML(b) {
		where := fmt.Sprintf("document %d", i+1)
		v, err := decode(doc)
		if err != nil {
			return nil, &Error{CRD: where, Err: err}
		}
		var items []any
		list := false
		switch m := v.(type) {
		case nil:
			continue
		case map[string]any:
			if l, ok := m["items"].([]any); ok && m["kind"] == "List" {
				items, list = l, true
			} else {
				items = []any{m}
			}
		default:
			return nil, &Error{CRD: where, Err: fmt.Errorf("not an object but %s", kindOf(v))}
		}
		for j, it := range items {
			w := where
			if list {
				w = fmt.Sprintf("%s, item %d", where, j+1)
			}
			m, ok := it.(map[string]any)
			if !ok || m["kind"] != "CustomResourceDefinition" {
				continue
			}
			crd, err := readCRD(m, w)
			if err != nil {
				return nil, err
			}
			if seen[crd.Name] {
				return nil, &Error{CRD: crd.Name, Err: errors.New("defined twice")}
			}
			seen[crd.Name] = true
			out = append(out, crd)
		}
	}
	return out, nil
}

// splitYAML cuts a YAML stream at lines that are "---" (with trailing
// space at most), as k8s.io/apimachinery's YAML reader does.
func splitYAML(b []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64*1024), len(b)+1)
	for sc.Scan() {
		line := sc.Bytes()
		if bytes.HasPrefix(line, []byte("---")) && len(bytes.TrimSpace(line[3:])) == 0 {
			docs = append(docs, bytes.Clone(cur.Bytes()))
			cur.Reset()
			continue
		}
		cur.Write(line)
		cur.WriteByte('\n')
	}
	return append(docs, cur.Bytes())
}

var (
	dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	colTypes = map[string]bool{"integer": true, "number": true, "string": true, "boolean": true, "date": true}
)

// ParseCRD reads one apiextensions.k8s.io/v1 CustomResourceDefinition
// given as a JSON object, as ParseCRDs reads it (with its checks and
// defaults), without ParseCRDs' passes over YAML and generic values: the
// form a server that stores CRDs as JSON reads them in, once per write.
func ParseCRD(b []byte) (CRD, error) {
	var d crdDoc
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&d); err != nil {
		// Named as ParseCRDs names it: by metadata.name when it reads.
		where := "document 1"
		var named struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if json.Unmarshal(b, &named) == nil && named.Metadata.Name != "" {
			where = named.Metadata.Name
		}
		return CRD{}, &Error{CRD: where, Err: err}
	}
	where := d.Metadata.Name
	if where == "" {
		where = "document 1"
	}
	if d.Kind != "CustomResourceDefinition" {
		return CRD{}, &Error{CRD: where, Path: "kind", Err: fmt.Errorf("%q is not CustomResourceDefinition", d.Kind)}
	}
	return readCRDDoc(&d, where)
}

func readCRD(m map[string]any, where string) (CRD, error) {
	if md, ok := m["metadata"].(map[string]any); ok {
		if n, ok := md["name"].(string); ok && n != "" {
			where = n
		}
	}
	j, err := json.Marshal(m)
	if err != nil {
		return CRD{}, &Error{CRD: where, Err: err}
	}
	var d crdDoc
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	if err := dec.Decode(&d); err != nil {
		return CRD{}, &Error{CRD: where, Err: err}
	}
	return readCRDDoc(&d, where)
}

// readCRDDoc checks and defaults a decoded CRD (where names it in errors).
func readCRDDoc(d *crdDoc, where string) (CRD, error) {
	fail := func(path, format string, a ...any) (CRD, error) {
		return CRD{}, &Error{CRD: where, Path: path, Err: fmt.Errorf(format, a...)}
	}
	if d.APIVersion != "apiextensions.k8s.io/v1" {
		return fail("apiVersion", "%q is not supported: use apiextensions.k8s.io/v1", d.APIVersion)
	}
	sp, n := d.Spec, d.Spec.Names
	switch {
	case sp.Group == "":
		return fail("spec.group", "required")
	case !strings.Contains(sp.Group, "."):
		return fail("spec.group", "%q should be a domain with at least one dot", sp.Group)
	case n.Plural == "":
		return fail("spec.names.plural", "required")
	case !dnsLabel.MatchString(n.Plural):
		return fail("spec.names.plural", "%q must be a lowercase DNS label", n.Plural)
	case n.Kind == "":
		return fail("spec.names.kind", "required")
	case d.Metadata.Name != n.Plural+"."+sp.Group:
		return fail("metadata.name", "%q must be spec.names.plural+\".\"+spec.group (%q)", d.Metadata.Name, n.Plural+"."+sp.Group)
	case sp.Scope != "Namespaced" && sp.Scope != "Cluster":
		return fail("spec.scope", "%q is not Namespaced or Cluster", sp.Scope)
	case sp.PreserveUnknownFields:
		return fail("spec.preserveUnknownFields", "must be false in apiextensions.k8s.io/v1; use x-kubernetes-preserve-unknown-fields in the schema")
	}
	if n.Singular == "" {
		n.Singular = strings.ToLower(n.Kind)
	}
	if n.ListKind == "" {
		n.ListKind = n.Kind + "List"
	}
	switch {
	case !dnsLabel.MatchString(n.Singular):
		return fail("spec.names.singular", "%q must be a lowercase DNS label", n.Singular)
	case n.Kind == n.ListKind:
		return fail("spec.names.listKind", "kind and listKind may not be the same")
	case len(sp.Versions) == 0:
		return fail("spec.versions", "must have at least one version")
	}
	crd := CRD{Name: d.Metadata.Name, Group: sp.Group, Names: n, Namespaced: sp.Scope == "Namespaced"}
	storage, served, names := 0, 0, map[string]bool{}
	for i, v := range sp.Versions {
		p := fmt.Sprintf("spec.versions[%d]", i)
		ver, err := readVersion(v, p)
		if err != nil {
			err.CRD = where
			return CRD{}, err
		}
		if names[v.Name] {
			return fail(p+".name", "%q is listed twice", v.Name)
		}
		names[v.Name] = true
		if v.Storage {
			storage++
		}
		if v.Served {
			served++
		}
		crd.Versions = append(crd.Versions, ver)
	}
	switch {
	case storage != 1:
		return fail("spec.versions", "must have exactly one version marked as storage version, not %d", storage)
	case served == 0:
		return fail("spec.versions", "must have at least one served version")
	}
	return crd, nil
}

func readVersion(v crdVersn, p string) (Version, *Error) {
	fail := func(path, format string, a ...any) (Version, *Error) {
		return Version{}, &Error{Path: path, Err: fmt.Errorf(format, a...)}
	}
	if !dnsLabel.MatchString(v.Name) {
		return fail(p+".name", "%q must be a lowercase DNS label", v.Name)
	}
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return fail(p+".schema.openAPIV3Schema", "required")
	}
	s, err := FromJSON(v.Schema.OpenAPIV3Schema)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			sp := p + ".schema.openAPIV3Schema"
			if e.Path != "" && e.Path[0] != '[' {
				sp += "."
			}
			return fail(sp+e.Path, "%w", e.Err)
		}
		return fail(p+".schema.openAPIV3Schema", "%w", err)
	}
	ver := Version{Name: v.Name, Served: v.Served, Storage: v.Storage, Deprecated: v.Deprecated, Schema: s}
	if sr := v.Subresources; sr != nil {
		ver.Status = sr.Status != nil
		if sc := sr.Scale; sc != nil {
			sp := p + ".subresources.scale"
			switch {
			case !strings.HasPrefix(sc.SpecReplicasPath, ".spec."):
				return fail(sp+".specReplicasPath", "%q must be a JSON path under .spec", sc.SpecReplicasPath)
			case !strings.HasPrefix(sc.StatusReplicasPath, ".status."):
				return fail(sp+".statusReplicasPath", "%q must be a JSON path under .status", sc.StatusReplicasPath)
			case sc.LabelSelectorPath != "" && !strings.HasPrefix(sc.LabelSelectorPath, ".spec.") && !strings.HasPrefix(sc.LabelSelectorPath, ".status."):
				return fail(sp+".labelSelectorPath", "%q must be a JSON path under .spec or .status", sc.LabelSelectorPath)
			}
			c := *sc
			ver.Scale = &c
		}
	}
	for i, c := range v.AdditionalPrinterColumns {
		cp := fmt.Sprintf("%s.additionalPrinterColumns[%d]", p, i)
		switch {
		case c.Name == "":
			return fail(cp+".name", "required")
		case !colTypes[c.Type]:
			return fail(cp+".type", "%q is not one of boolean, date, integer, number, string", c.Type)
		case c.JSONPath == "":
			return fail(cp+".jsonPath", "required")
		}
		ver.Columns = append(ver.Columns, c)
	}
	for i, f := range v.SelectableFields {
		if f.JSONPath == "" {
			return fail(fmt.Sprintf("%s.selectableFields[%d].jsonPath", p, i), "required")
		}
		ver.SelectableFields = append(ver.SelectableFields, strings.TrimPrefix(f.JSONPath, "."))
	}
	return ver, nil
}

// LoadCRDs reads the CRDs of files and directories with ParseCRDs, as
// envtest's CRDDirectoryPaths does: a directory contributes its *.yaml,
// *.yml and *.json files in name order, not its subdirectories; a file
// named directly is read whatever its extension. The *Error of a bad
// manifest names its file. A CRD name may appear once over all paths.
//
//	crds, err := schema.LoadCRDs("config/crd/bases")
func LoadCRDs(paths ...string) ([]CRD, error) {
	var out []CRD
	seen := map[string]string{}
	for _, p := range paths {
		files := []string{p}
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if fi.IsDir() {
			entries, err := os.ReadDir(p) // sorted by name
			if err != nil {
				return nil, err
			}
			files = files[:0]
			for _, e := range entries {
				switch filepath.Ext(e.Name()) {
				case ".yaml", ".yml", ".json":
					if !e.IsDir() {
						files = append(files, filepath.Join(p, e.Name()))
					}
				}
			}
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			crds, err := ParseCRDs(b)
			if err != nil {
				var e *Error
				if errors.As(err, &e) {
					e.File = f
				}
				return nil, err
			}
			for _, c := range crds {
				if prev, dup := seen[c.Name]; dup {
					return nil, &Error{File: f, CRD: c.Name, Err: fmt.Errorf("defined twice (first in %s)", prev)}
				}
				seen[c.Name] = f
			}
			out = append(out, crds...)
		}
	}
	return out, nil
}
