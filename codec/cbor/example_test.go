package cbor_test

import (
	"encoding/json"
	"fmt"

	"github.com/kapi-dev/kapi/codec/cbor"
)

func Example() {
	obj := map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"name": "a", "generation": json.Number("2")},
		"data":       map[string]any{"ratio": json.Number("1.5")},
	}
	body, err := cbor.Marshal(obj)
	if err != nil {
		panic(err)
	}
	fmt.Printf("% x\n", body[:4])

	back, err := cbor.Unmarshal(body)
	if err != nil {
		panic(err)
	}
	fmt.Println(back["metadata"], back["data"])

	// A list body from cached item encodings, and one watch-stream item.
	item, _ := cbor.AppendValue(nil, obj)
	list, _ := cbor.AppendList(nil, "ConfigMapList", "v1", map[string]any{"resourceVersion": "9"}, [][]byte{item})
	event, _ := cbor.AppendWatchEvent(nil, "ADDED", body)
	fmt.Printf("% x\n", list[:10])
	fmt.Printf("% x\n", event[:len(event)-len(body)]) // then the tagged body

	_, err = cbor.Unmarshal([]byte("\xa2\x41a\x01\x41a\x02"))
	fmt.Println(err)
	// Output:
	// d9 d9 f7 a4
	// map[generation:2 name:a] map[ratio:1.5]
	// d9 d9 f7 a4 44 6b 69 6e 64 4d
	// d9 d9 f7 a2 44 74 79 70 65 45 41 44 44 45 44 46 6f 62 6a 65 63 74
	// cbor: invalid body: found duplicate map key "a" at map element index 1
}
