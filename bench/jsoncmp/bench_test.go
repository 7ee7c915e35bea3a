package jsoncmp

import (
	"strings"
	"testing"
)

// Run: go test -run '^$' -bench . -benchmem -count 5 ./jsoncmp/
// (from bench/). Every library runs on the same bytes in the same run;
// TestSameResults checks they produce the same trees and bytes.

var benchName = strings.NewReplacer("/", "-", " ", "-").Replace

func BenchmarkUnmarshal(b *testing.B) {
	for _, s := range sizes {
		in := Encode(Object(s.size))
		for _, l := range Libs {
			if l.Unmarshal == nil {
				continue
			}
			b.Run(s.name+"/"+benchName(l.Name), func(b *testing.B) {
				b.SetBytes(int64(len(in)))
				for b.Loop() {
					if _, err := l.Unmarshal(in); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkMarshal(b *testing.B) {
	for _, s := range sizes {
		obj := Object(s.size)
		n := int64(len(Encode(obj)))
		for _, l := range Libs {
			if l.Marshal == nil {
				continue
			}
			v := Renumber(obj, l.Number)
			b.Run(s.name+"/"+benchName(l.Name), func(b *testing.B) {
				b.SetBytes(n)
				for b.Loop() {
					if _, err := l.Marshal(v); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkValid(b *testing.B) {
	for _, s := range sizes {
		in := Encode(Object(s.size))
		for _, l := range Libs {
			if l.Valid == nil {
				continue
			}
			b.Run(s.name+"/"+benchName(l.Name), func(b *testing.B) {
				b.SetBytes(int64(len(in)))
				for b.Loop() {
					if !l.Valid(in) {
						b.Fatal("not valid")
					}
				}
			})
		}
	}
}
