//go:build !race

package main

// raced is true when the tests run under the race detector (see race_test.go).
const raced = false
