package openapi

import (
	"cmp"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
)

// The media types of /openapi/v2.
const (
	MediaJSON  = "application/json"
	MediaProto = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	// MediaProtoDeprecated is client-go's name for MediaProto, answered
	// with MediaProto.
	MediaProtoDeprecated = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
)

// V2 is the /openapi/v2 document in both forms.
type V2 struct {
	JSON, Proto []byte
	ETag        string // quoted: the SHA-512 of JSON in uppercase hex, as kube
	Modified    time.Time
}

// NewV2 builds the /openapi/v2 document of resources (see Swagger) in
// JSON and in gnostic's protobuf form; modified is its Last-Modified.
func NewV2(gitVersion string, resources []Resource, modified time.Time) (*V2, error) {
	resources = slices.Clone(resources)
	slices.SortFunc(resources, func(a, b Resource) int {
		return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Version, b.Version), strings.Compare(a.Plural, b.Plural))
	})
	j, err := json.Marshal(Swagger(gitVersion, resources))
	if err != nil {
		return nil, fmt.Errorf("registry: OpenAPI v2 document: %w", err)
	}
	doc, err := openapi_v2.ParseDocument(j)
	if err != nil {
		return nil, fmt.Errorf("registry: OpenAPI v2 document: %w", err)
	}
	p, err := proto.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("registry: OpenAPI v2 document: %w", err)
	}
	return &V2{
		JSON: j, Proto: p,
		ETag:     strconv.Quote(fmt.Sprintf("%X", sha512.Sum512(j))),
		Modified: modified.UTC().Truncate(time.Second),
	}, nil
}

// PickV2 chooses the response's media type from the Accept headers
// as kube-openapi's handler does: the clauses by weight and then
// specificity, the first that names JSON or one of the two protobuf names
// wins; no Accept header is */*, which is JSON.
func PickV2(accept []string) (string, bool) {
	type clause struct {
		typ, sub string
		q        float64
	}
	var clauses []clause
	for _, h := range accept {
		for part := range strings.SplitSeq(h, ",") {
			mt, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			typ, sub, ok := strings.Cut(strings.TrimSpace(mt), "/")
			if !ok {
				continue
			}
			c := clause{typ: strings.ToLower(typ), sub: strings.ToLower(sub), q: 1}
			for p := range strings.SplitSeq(params, ";") {
				k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
				if strings.EqualFold(strings.TrimSpace(k), "q") {
					if q, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
						c.q = q
					}
				}
			}
			if c.q > 0 {
				clauses = append(clauses, c)
			}
		}
	}
	if len(accept) == 0 {
		clauses = []clause{{typ: "*", sub: "*", q: 1}}
	}
	specificity := func(c clause) int {
		switch {
		case c.typ == "*":
			return 0
		case c.sub == "*":
			return 1
		}
		return 2
	}
	slices.SortStableFunc(clauses, func(a, b clause) int {
		return cmp.Or(cmp.Compare(b.q, a.q), cmp.Compare(specificity(b), specificity(a)))
	})
	offers := []struct{ sub, answer string }{
		{"json", MediaJSON},
		{strings.TrimPrefix(MediaProtoDeprecated, "application/"), MediaProto},
		{strings.TrimPrefix(MediaProto, "application/"), MediaProto},
	}
	for _, c := range clauses {
		for _, o := range offers {
			if (c.typ == "application" || c.typ == "*") && (c.sub == o.sub || c.sub == "*") {
				return o.answer, true
			}
		}
	}
	return "", false
}

const (
	metaV1Def  = "io.k8s.apimachinery.pkg.apis.meta.v1."
	definition = "#/definitions/"
)

// Swagger is the Swagger 2.0 document of resources, in kube's shape:
// a definition per kind and list kind (named as in /openapi/v3), the meta
// types they refer to, and a path per endpoint whose operations carry
// x-kubernetes-action and x-kubernetes-group-version-kind.
func Swagger(gitVersion string, resources []Resource) map[string]any {
	defs := map[string]any{
		metaV1Def + "ObjectMeta":    objectMetaSchemaV2(),
		metaV1Def + "ListMeta":      listMetaSchemaV2(),
		metaV1Def + "Status":        statusSchemaV2(),
		metaV1Def + "DeleteOptions": deleteOptionsSchemaV2(),
		metaV1Def + "Patch":         map[string]any{"type": "object", "description": "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body."},
	}
	paths := map[string]any{}
	for i := range resources {
		res := &resources[i]
		defs[res.schemaName()] = kindSchemaV2(res)
		defs[res.schemaName()+"List"] = listSchemaV2(res)
		if res.Scale {
			defs[scaleDef] = scaleSchemaV2()
		}
		res.pathsV2(paths)
	}
	return map[string]any{
		"swagger":     "2.0",
		"info":        map[string]any{"title": "Kubernetes", "version": gitVersion},
		"paths":       paths,
		"definitions": defs,
		"securityDefinitions": map[string]any{"BearerToken": map[string]any{
			"type": "apiKey", "name": "authorization", "in": "header", "description": "Bearer Token authentication",
		}},
		"security": []any{map[string]any{"BearerToken": []any{}}},
	}
}

// opIDPrefix is the group-version part of kube's operation ids and tags:
// "CoreV1" and "core_v1", "ExampleComV1" and "exampleCom_v1".
func (res *Resource) opIDPrefix() (id, tag string) {
	g := strings.TrimSuffix(res.Group, ".k8s.io")
	if g == "" {
		g = "core"
	}
	var b strings.Builder
	for _, w := range strings.FieldsFunc(g, func(c rune) bool { return c == '.' || c == '-' }) {
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	camel := b.String()
	return camel + strings.ToUpper(res.Version[:1]) + res.Version[1:], strings.ToLower(camel[:1]) + camel[1:] + "_" + res.Version
}

// pathsV2 adds res's endpoints to paths.
func (res *Resource) pathsV2(paths map[string]any) {
	idPrefix, tag := res.opIDPrefix()
	gvk := map[string]any{"group": res.Group, "version": res.Version, "kind": res.Kind}
	kindRef := map[string]any{"$ref": definition + res.schemaName()}
	produces := []any{"application/json", "application/yaml"}
	if res.Protobuf {
		produces = append(produces, "application/vnd.kubernetes.protobuf")
	}
	produces = append(produces, "application/cbor")
	type reply struct {
		code, desc string
		ref        map[string]any
	}
	type op struct {
		verb, action, id string
		gvk              map[string]any
		params           []any
		responses        map[string]any
		consumes         []any
		produces         []any
	}
	build := func(o op) map[string]any {
		m := map[string]any{
			"description":                     o.verb + " " + res.Kind,
			"consumes":                        o.consumes,
			"produces":                        o.produces,
			"schemes":                         []any{"https"},
			"tags":                            []any{tag},
			"operationId":                     o.id,
			"parameters":                      o.params,
			"responses":                       o.responses,
			"x-kubernetes-action":             o.action,
			"x-kubernetes-group-version-kind": o.gvk,
		}
		if o.consumes == nil {
			m["consumes"] = []any{"*/*"}
		}
		if o.produces == nil {
			m["produces"] = produces
		}
		if o.params == nil {
			m["parameters"] = []any{}
		}
		m["responses"].(map[string]any)["401"] = map[string]any{"description": "Unauthorized"}
		return m
	}
	responses := func(rs ...reply) map[string]any {
		m := map[string]any{}
		for _, r := range rs {
			m[r.code] = map[string]any{"description": r.desc, "schema": r.ref}
		}
		return m
	}
	statusRef := map[string]any{"$ref": definition + metaV1Def + "Status"}
	body := func(ref map[string]any) any {
		return map[string]any{"name": "body", "in": "body", "required": true, "schema": ref}
	}
	write := []any{queryParam("dryRun", "string"), queryParam("fieldManager", "string"), queryParam("fieldValidation", "string")}
	patchConsumes := []any{"application/json-patch+json", "application/merge-patch+json"}
	if res.Schema != nil && smpAgreesWithClients(res.Schema) {
		patchConsumes = append(patchConsumes, "application/strategic-merge-patch+json")
	}
	patchConsumes = append(patchConsumes, "application/apply-patch+yaml", "application/apply-patch+cbor")
	listParams := []any{
		queryParam("allowWatchBookmarks", "boolean"), queryParam("continue", "string"), queryParam("fieldSelector", "string"),
		queryParam("labelSelector", "string"), queryParam("limit", "integer"), queryParam("resourceVersion", "string"),
		queryParam("resourceVersionMatch", "string"), queryParam("sendInitialEvents", "boolean"),
		queryParam("timeoutSeconds", "integer"), queryParam("watch", "boolean"),
	}
	listProduces := append(slices.Clone(produces), "application/json;stream=watch")
	if res.Protobuf {
		listProduces = append(listProduces, "application/vnd.kubernetes.protobuf;stream=watch")
	}
	listRef := map[string]any{"$ref": definition + res.schemaName() + "List"}

	ns, nsWord := "", ""
	pathParams := []any{}
	if res.Namespaced {
		ns, nsWord = "namespaces/{namespace}/", "Namespaced"
		pathParams = append(pathParams, map[string]any{
			"name": "namespace", "in": "path", "required": true, "type": "string", "uniqueItems": true,
			"description": "object name and auth scope, such as for teams and projects",
		})
	}
	pretty := queryParam("pretty", "string")
	collection := "/" + path(res.Group, res.Version) + "/" + ns + res.Plural
	paths[collection] = map[string]any{
		"parameters": append(slices.Clone(pathParams), pretty),
		"get": build(op{verb: "list or watch objects of kind", action: "list", id: "list" + idPrefix + nsWord + res.Kind, gvk: gvk,
			params: listParams, responses: responses(reply{"200", "OK", listRef}), produces: listProduces}),
		"post": build(op{verb: "create a", action: "post", id: "create" + idPrefix + nsWord + res.Kind, gvk: gvk,
			params:    append([]any{body(kindRef)}, write...),
			responses: responses(reply{"200", "OK", kindRef}, reply{"201", "Created", kindRef}, reply{"202", "Accepted", kindRef})}),
		"delete": build(op{verb: "delete collection of", action: "deletecollection", id: "deletecollection" + idPrefix + nsWord + res.Kind, gvk: gvk,
			params: append([]any{body(map[string]any{"$ref": definition + metaV1Def + "DeleteOptions"})}, append(slices.Clone(listParams),
				queryParam("dryRun", "string"), queryParam("gracePeriodSeconds", "integer"), queryParam("propagationPolicy", "string"))...),
			responses: responses(reply{"200", "OK", statusRef})}),
	}
	if res.Namespaced {
		paths["/"+path(res.Group, res.Version)+"/"+res.Plural] = map[string]any{
			"parameters": []any{pretty},
			"get": build(op{verb: "list or watch objects of kind", action: "list", id: "list" + idPrefix + res.Kind + "ForAllNamespaces", gvk: gvk,
				params: listParams, responses: responses(reply{"200", "OK", listRef}), produces: listProduces}),
		}
	}
	itemParams := append([]any{map[string]any{
		"name": "name", "in": "path", "required": true, "type": "string", "uniqueItems": true, "description": "name of the " + res.Kind,
	}}, append(slices.Clone(pathParams), pretty)...)
	// item adds the get, put and patch of an object or a subresource.
	item := func(suffix string, gvk, ref map[string]any) map[string]any {
		return map[string]any{
			"parameters": itemParams,
			"get": build(op{verb: "read the specified", action: "get", id: "read" + idPrefix + nsWord + res.Kind + suffix, gvk: gvk,
				responses: responses(reply{"200", "OK", ref})}),
			"put": build(op{verb: "replace the specified", action: "put", id: "replace" + idPrefix + nsWord + res.Kind + suffix, gvk: gvk,
				params: append([]any{body(ref)}, write...), responses: responses(reply{"200", "OK", ref}, reply{"201", "Created", ref})}),
			"patch": build(op{verb: "partially update the specified", action: "patch", id: "patch" + idPrefix + nsWord + res.Kind + suffix, gvk: gvk,
				params:    append([]any{body(map[string]any{"$ref": definition + metaV1Def + "Patch"})}, append(slices.Clone(write), queryParam("force", "boolean"))...),
				responses: responses(reply{"200", "OK", ref}, reply{"201", "Created", ref}), consumes: patchConsumes}),
		}
	}
	object := item("", gvk, kindRef)
	object["delete"] = build(op{verb: "delete a", action: "delete", id: "delete" + idPrefix + nsWord + res.Kind, gvk: gvk,
		params: []any{body(map[string]any{"$ref": definition + metaV1Def + "DeleteOptions"}), queryParam("dryRun", "string"),
			queryParam("gracePeriodSeconds", "integer"), queryParam("propagationPolicy", "string")},
		responses: responses(reply{"200", "OK", statusRef}, reply{"202", "Accepted", statusRef})})
	paths[collection+"/{name}"] = object
	if res.Status {
		paths[collection+"/{name}/status"] = item("Status", gvk, kindRef)
	}
	if res.Scale {
		scaleGVK := map[string]any{"group": "autoscaling", "version": "v1", "kind": "Scale"}
		paths[collection+"/{name}/scale"] = item("Scale", scaleGVK, map[string]any{"$ref": definition + scaleDef})
	}
}

// queryParam is a Swagger 2.0 query parameter.
func queryParam(name, typ string) any {
	return map[string]any{"name": name, "in": "query", "type": typ, "uniqueItems": true}
}
