package storage_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/kapi-dev/kapi/rv"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/memory"
)

// Parse the labelSelector and fieldSelector of a list request and filter
// stored objects by their attributes, without decoding them.
func ExampleParseLabelSelector() {
	label, err := storage.ParseLabelSelector("app in (web, api), tier!=db, !canary")
	if err != nil {
		panic(err)
	}
	field, err := storage.ParseFieldSelector("metadata.namespace=prod")
	if err != nil {
		panic(err)
	}
	p := storage.Predicate{Label: label, Field: field}
	fmt.Println(p.Label, "|", p.Field)

	for _, o := range []storage.Object{
		{Key: "/apps/deployments/prod/front", Labels: map[string]string{"app": "web", "tier": "front"}, Fields: map[string]string{"metadata.namespace": "prod"}},
		{Key: "/apps/deployments/prod/canary", Labels: map[string]string{"app": "web", "canary": "true"}, Fields: map[string]string{"metadata.namespace": "prod"}},
		{Key: "/apps/deployments/dev/front", Labels: map[string]string{"app": "web"}, Fields: map[string]string{"metadata.namespace": "dev"}},
	} {
		fmt.Println(o.Key, p.Matches(o))
	}

	_, err = storage.ParseLabelSelector("app in web")
	fmt.Println(errors.Is(err, storage.ErrInvalid), err)
	// Output:
	// app in (api,web),!canary,tier!=db | metadata.namespace=prod
	// /apps/deployments/prod/front true
	// /apps/deployments/prod/canary false
	// /apps/deployments/dev/front false
	// true unable to parse requirement: found 'web' expected: '('
}

// Every reader of one stored state shares one decoded form: decode once,
// then copy before changing it.
func ExampleObject_Map() {
	ctx := context.Background()
	s := memory.New(memory.Options{})
	defer s.Close()
	created, _ := s.Create(ctx, storage.Object{Key: "/example.com/widgets/default/w", Value: []byte(`{"metadata":{"name":"w"},"spec":{"replicas":3}}`)})
	got, _ := s.Get(ctx, created.Key, storage.GetOptions{Match: rv.MostRecent})
	a, _ := created.Map()
	b, _ := got.Map()
	fmt.Println(a["spec"], b["metadata"].(map[string]any)["resourceVersion"])
	fmt.Println("shared:", reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer())
	// Output:
	// map[replicas:3] 2
	// shared: true
}
