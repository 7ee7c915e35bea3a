package main

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// The protobuf files: one proto3 file per k8s.io/api package, at
// k8s.io/api's path, holding every message the kinds reach, with
// k8s.io/api's package, message names and field numbers (read from the
// Go fields' protobuf tags). Presence follows kapi's convention
// (codec/protobuf's doc): a scalar is optional when its Go field is a
// pointer or its JSON has no omitempty; a message field when it is a
// pointer. A Go field inlined in JSON (`json:",inline"`, such as
// Volume.VolumeSource) keeps its own message and field number and is
// marked with a json_name starting with "-inline-", which codec/protobuf
// reads as "this message's fields are the parent's JSON keys".

// specialMessages are the Go types with a proto message of their own in
// the hand-written files.
var specialMessages = map[string]string{
	"k8s.io/apimachinery/pkg/api/resource.Quantity":   "k8s.io.apimachinery.pkg.api.resource.Quantity",
	"k8s.io/apimachinery/pkg/util/intstr.IntOrString": "k8s.io.apimachinery.pkg.util.intstr.IntOrString",
	"k8s.io/apimachinery/pkg/runtime.RawExtension":    "k8s.io.apimachinery.pkg.runtime.RawExtension",
}

// protoFile is the generated file of one Go package.
type protoFile struct {
	pkg      string // Go package path, e.g. k8s.io/api/core/v1
	messages map[string]string
	imports  map[string]bool
}

type protoGen struct {
	files map[string]*protoFile // by Go package path
	seen  map[reflect.Type]bool
}

// protoFiles returns the .proto files of the messages of roots and of
// every message they reach, by path under codec/protobuf/proto.
// It also returns every struct type it reached, by OpenAPI definition
// name ("io.k8s.api.core.v1.Pod").
func protoFiles(roots []any) (map[string][]byte, map[string]reflect.Type, error) {
	g := &protoGen{files: map[string]*protoFile{}, seen: map[reflect.Type]bool{}}
	for _, r := range roots {
		if err := g.message(reflect.TypeOf(r)); err != nil {
			return nil, nil, err
		}
	}
	out := map[string][]byte{}
	for _, f := range g.files {
		out[f.pkg+"/generated.proto"] = f.render()
	}
	types := map[string]reflect.Type{}
	for t := range g.seen {
		types[openAPIName(t)] = t
	}
	return out, types, nil
}

// openAPIName is the OpenAPI definition name of a Go type:
// k8s.io/api/core/v1.Pod is io.k8s.api.core.v1.Pod.
func openAPIName(t reflect.Type) string {
	return "io.k8s." + strings.ReplaceAll(strings.TrimPrefix(t.PkgPath(), "k8s.io/"), "/", ".") + "." + t.Name()
}

func protoPackage(goPkg string) string { return strings.ReplaceAll(goPkg, "/", ".") }

// messageName is the full proto name of a Go struct type.
func messageName(t reflect.Type) string {
	full := t.PkgPath() + "." + t.Name()
	if n, ok := specialMessages[full]; ok {
		return n
	}
	return protoPackage(t.PkgPath()) + "." + t.Name()
}

func (g *protoGen) file(pkg string) *protoFile {
	f := g.files[pkg]
	if f == nil {
		f = &protoFile{pkg: pkg, messages: map[string]string{}, imports: map[string]bool{}}
		g.files[pkg] = f
	}
	return f
}

// message generates the message of struct type t and those it reaches.
func (g *protoGen) message(t reflect.Type) error {
	if g.seen[t] {
		return nil
	}
	g.seen[t] = true
	if handWritten[t.PkgPath()] {
		return nil
	}
	f := g.file(t.PkgPath())
	var b strings.Builder
	fmt.Fprintf(&b, "message %s {\n", t.Name())
	type line struct {
		num  int
		text string
	}
	var lines []line
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("protobuf")
		if tag == "" || tag == "-" {
			continue
		}
		parts := strings.Split(tag, ",")
		num, err := strconv.Atoi(parts[1])
		if err != nil {
			return fmt.Errorf("%s.%s: protobuf tag %q", t, sf.Name, tag)
		}
		jsonTag := sf.Tag.Get("json")
		jsonName, opts, _ := strings.Cut(jsonTag, ",")
		inline := jsonName == "" && (sf.Anonymous || strings.Contains(opts, "inline"))
		omitempty := strings.Contains(opts, "omitempty")
		name := jsonName
		if inline {
			if name = tagValue(parts, "name"); name == "" { // EphemeralContainer's tag has none
				name = strings.ToLower(sf.Name[:1]) + sf.Name[1:]
			}
		}
		typ, optional, err := g.fieldType(f, sf.Type, omitempty, sf.Tag)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", t, sf.Name, err)
		}
		var l strings.Builder
		l.WriteString("  ")
		if optional {
			l.WriteString("optional ")
		}
		fmt.Fprintf(&l, "%s %s = %d", typ, name, num)
		var fopts []string
		if inline {
			fopts = append(fopts, fmt.Sprintf("json_name = %q", "-inline-"+name))
		}
		if strings.HasPrefix(typ, "repeated ") && isScalar(strings.TrimPrefix(typ, "repeated ")) && typ != "repeated string" && typ != "repeated bytes" {
			fopts = append(fopts, "packed = false")
		}
		if len(fopts) > 0 {
			l.WriteString(" [" + strings.Join(fopts, ", ") + "]")
		}
		l.WriteString(";\n")
		lines = append(lines, line{num, l.String()})
	}
	slices.SortFunc(lines, func(a, b line) int { return a.num - b.num })
	for _, l := range lines {
		b.WriteString(l.text)
	}
	b.WriteString("}\n")
	f.messages[t.Name()] = b.String()
	return nil
}

func tagValue(parts []string, key string) string {
	for _, p := range parts {
		if v, ok := strings.CutPrefix(p, key+"="); ok {
			return v
		}
	}
	return ""
}

func isScalar(typ string) bool {
	switch typ {
	case "string", "bytes", "bool", "int32", "int64", "uint32", "uint64", "double", "float":
		return true
	}
	return false
}

// fieldType is the proto type of a Go field of type t in file f, and
// whether it is optional.
func (g *protoGen) fieldType(f *protoFile, t reflect.Type, omitempty bool, tag reflect.StructTag) (string, bool, error) {
	ptr := false
	if t.Kind() == reflect.Pointer {
		ptr, t = true, t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice:
		if t.Name() != "" && t.Elem().Kind() == reflect.String && !ptr {
			// A named []string (certificates.k8s.io/v1's ExtraValue):
			// gogo's message of one repeated string, field 1 "items"
			// (codec/protobuf's stringList reads it as a JSON array).
			return g.stringList(f, t), false, nil
		}
		if t.Elem().Kind() == reflect.Uint8 {
			return "bytes", ptr || !omitempty, nil
		}
		if ptr {
			return "", false, fmt.Errorf("pointer to slice %s", t)
		}
		elem, _, err := g.fieldType(f, t.Elem(), true, "")
		if err != nil {
			return "", false, err
		}
		if strings.HasPrefix(elem, "repeated ") || strings.HasPrefix(elem, "map<") {
			return "", false, fmt.Errorf("nested list %s", t)
		}
		return "repeated " + elem, false, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return "", false, fmt.Errorf("map key %s", t.Key())
		}
		val, _, err := g.fieldType(f, t.Elem(), true, "")
		if err != nil {
			return "", false, err
		}
		if strings.HasPrefix(val, "repeated ") || strings.HasPrefix(val, "map<") {
			return "", false, fmt.Errorf("map of lists %s", t)
		}
		return "map<string, " + val + ">", false, nil
	case reflect.Struct:
		full := t.PkgPath() + "." + t.Name()
		name := messageName(t)
		if _, ok := specialMessages[full]; !ok {
			if err := g.message(t); err != nil {
				return "", false, err
			}
		}
		if t.PkgPath() != f.pkg {
			f.imports[protoImport(t)] = true
		} else {
			name = t.Name()
		}
		return name, ptr, nil
	}
	optional := ptr || !omitempty
	switch t.Kind() {
	case reflect.String:
		return "string", optional, nil
	case reflect.Bool:
		return "bool", optional, nil
	case reflect.Int32:
		return "int32", optional, nil
	case reflect.Int64:
		return "int64", optional, nil
	case reflect.Uint32:
		return "uint32", optional, nil
	case reflect.Uint64:
		return "uint64", optional, nil
	case reflect.Float64:
		return "double", optional, nil
	case reflect.Float32:
		return "float", optional, nil
	}
	return "", false, fmt.Errorf("unsupported type %s", t)
}

// stringList generates the message of a named []string type t, as gogo
// writes it, and returns its name as a field of file f names it.
func (g *protoGen) stringList(f *protoFile, t reflect.Type) string {
	if !handWritten[t.PkgPath()] {
		g.file(t.PkgPath()).messages[t.Name()] = "message " + t.Name() + " {\n  repeated string items = 1;\n}\n"
	}
	if t.PkgPath() != f.pkg {
		f.imports[protoImport(t)] = true
		return protoPackage(t.PkgPath()) + "." + t.Name()
	}
	return t.Name()
}

// protoImport is the file that defines the message of struct t.
func protoImport(t reflect.Type) string {
	return t.PkgPath() + "/generated.proto"
}

func (f *protoFile) render() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `// Code generated by gen/builtin from k8s.io/api's Go types; DO NOT EDIT.
//
// kapi's description of the %s messages: k8s.io/api's package, message
// names and field numbers, in proto3 with kapi's presence marks (optional:
// a Go pointer, or a scalar whose JSON has no omitempty) and json_name
// "-inline-NAME" on the fields Go inlines in JSON.
syntax = "proto3";

package %s;

`, f.pkg, protoPackage(f.pkg))
	for _, imp := range sortedKeys(f.imports) {
		fmt.Fprintf(&b, "import %q;\n", imp)
	}
	fmt.Fprintf(&b, "\noption go_package = %q;\n", f.pkg)
	for _, name := range sortedKeys(f.messages) {
		b.WriteString("\n" + f.messages[name])
	}
	return []byte(b.String())
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
