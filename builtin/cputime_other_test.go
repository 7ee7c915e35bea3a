//go:build !unix

package builtin_test

import "time"

// cpuTime is unknown here (cputime_unix_test.go).
func cpuTime() (time.Duration, bool) { return 0, false }
