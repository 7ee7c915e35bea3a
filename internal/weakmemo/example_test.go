package weakmemo_test

import (
	"fmt"
	"strings"

	"github.com/kapi-dev/kapi/internal/weakmemo"
)

func ExampleMemo() {
	type input struct{ words []string }
	var compiled weakmemo.Memo[input, string]
	compile := func(in *input) (string, error) {
		fmt.Println("compiling")
		return strings.Join(in.words, " "), nil
	}
	in := &input{words: []string{"built", "once"}}
	a, _ := compiled.Get(in, compile)
	b, _ := compiled.Get(in, compile)
	fmt.Println(a, "|", b)
	// Output:
	// compiling
	// built once | built once
}
