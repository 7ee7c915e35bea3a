package gojson_test

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/kapi-dev/kapi/registry/internal/gojson"
	"github.com/kapi-dev/kapi/schema"
)

func ExampleCheck() {
	body := []byte(`{"metadata":{"name":"a"},"data":{"k":1}}`)
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var obj any
	_ = d.Decode(&obj)
	err := gojson.Check(schema.ConfigMap(), obj, func() ([]byte, error) { return body, nil })
	fmt.Println(err)
	// Output: json: cannot unmarshal number into Go struct field ConfigMap.data of type string
}
