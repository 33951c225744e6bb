//go:build !race

package simulation

// raced is true when the tests run under the race detector (see race_test.go).
const raced = false
