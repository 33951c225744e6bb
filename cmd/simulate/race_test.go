//go:build race

package main

// raced is true when the tests run under the race detector, which makes the
// simulation 10 to 20 times slower and has nothing to find in its one
// goroutine: the run of every scenario is then left out.
const raced = true
