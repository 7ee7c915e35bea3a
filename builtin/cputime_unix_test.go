//go:build unix

package builtin_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used, user and system: on a
// shared machine a benchmark's CPU per operation is steadier than its
// wall time.
func cpuTime() (time.Duration, bool) {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0, false
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano()), true
}
