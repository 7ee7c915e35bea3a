//go:build !crenvtest

package controller_test

import "github.com/kapi-dev/kapi/envtest"

// The names the suite takes from envtest; envtest_cr_test.go is this
// file with the other import.
type (
	Environment       = envtest.Environment
	User              = envtest.User
	CRDInstallOptions = envtest.CRDInstallOptions
)
