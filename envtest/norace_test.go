//go:build !race

package envtest_test

const raceEnabled = false
