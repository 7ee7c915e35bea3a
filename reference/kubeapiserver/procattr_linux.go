package kubeapiserver

import "syscall"

// procAttr has Linux kill kube-apiserver when the process that started it
// dies without calling Stop (a test binary ended by its -timeout, say),
// rather than leave it running. The signal is tied to the thread that
// started the child; the Go runtime ends threads only when a goroutine
// that locked one exits, which Start's callers do not.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
