package main

import (
	"fmt"
	"path/filepath"
	"strings"
)

// discoveryEntry is what kube's aggregated discovery (api/discovery/
// aggregated_v2.json in k8s.io/kubernetes) says of one resource.
type discoveryEntry struct {
	Singular     string
	Namespaced   bool
	ShortNames   []string
	Categories   []string
	Verbs        []string
	Subresources []subresource
}

type subresource struct {
	Name                 string
	Group, Version, Kind string // the response kind; "" group/version: the resource's
	Verbs                []string
}

func discoveryEntries(kube string) (map[string]discoveryEntry, error) {
	doc, err := loadDoc(filepath.Join(kube, "api/discovery"), "aggregated_v2.json")
	if err != nil {
		return nil, err
	}
	found := map[string]discoveryEntry{}
	for _, g := range list(doc["items"]) {
		gm := g.(map[string]any)
		group, _ := gm["metadata"].(map[string]any)["name"].(string)
		for _, v := range list(gm["versions"]) {
			vm := v.(map[string]any)
			for _, r := range list(vm["resources"]) {
				rm := r.(map[string]any)
				for _, k := range kinds {
					if k.group != group || k.version != vm["version"] || k.plural != rm["resource"] {
						continue
					}
					e := discoveryEntry{
						Singular:   str(rm["singularResource"]),
						Namespaced: rm["scope"] == "Namespaced",
						ShortNames: strs(rm["shortNames"]), Categories: strs(rm["categories"]), Verbs: strs(rm["verbs"]),
					}
					for _, s := range list(rm["subresources"]) {
						sm := s.(map[string]any)
						rk, _ := sm["responseKind"].(map[string]any)
						e.Subresources = append(e.Subresources, subresource{
							Name: str(sm["subresource"]), Group: str(rk["group"]), Version: str(rk["version"]), Kind: str(rk["kind"]),
							Verbs: strs(sm["verbs"]),
						})
					}
					found[k.id()] = e
				}
			}
		}
	}
	// The core group is not in the aggregated document: its legacy
	// /api/v1 list names subresources as "pods/status".
	core, err := loadDoc(filepath.Join(kube, "api/discovery"), "api__v1.json")
	if err != nil {
		return nil, err
	}
	for _, k := range kinds {
		if k.group != "" {
			continue
		}
		var e discoveryEntry
		ok := false
		for _, r := range list(core["resources"]) {
			rm := r.(map[string]any)
			name := str(rm["name"])
			if name == k.plural {
				ok = true
				e.Singular, e.Namespaced = str(rm["singularName"]), rm["namespaced"] == true
				e.ShortNames, e.Categories, e.Verbs = strs(rm["shortNames"]), strs(rm["categories"]), strs(rm["verbs"])
			} else if sub, found := strings.CutPrefix(name, k.plural+"/"); found {
				kind := str(rm["kind"])
				if kind == kindName(k) && str(rm["group"]) == "" {
					kind = ""
				}
				e.Subresources = append(e.Subresources, subresource{Name: sub, Group: str(rm["group"]), Version: str(rm["version"]), Kind: kind, Verbs: strs(rm["verbs"])})
			}
		}
		if ok {
			found[k.id()] = e
		}
	}
	for _, k := range kinds {
		if _, ok := found[k.id()]; !ok {
			return nil, fmt.Errorf("aggregated_v2.json: no %s/%s %s", k.group, k.version, k.plural)
		}
	}
	return found, nil
}

func str(v any) string { s, _ := v.(string); return s }

func strs(v any) []string {
	var out []string
	for _, e := range list(v) {
		out = append(out, e.(string))
	}
	return out
}
