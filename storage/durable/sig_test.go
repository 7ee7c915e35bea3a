package durable_test

import (
	"os/signal"
	"syscall"
)

func ignoreSIGXFSZ() { signal.Ignore(syscall.SIGXFSZ) }
