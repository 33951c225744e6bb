//go:build race

package simulation

// raced is true when the tests run under the race detector, which makes the
// simulation's one goroutine 10 to 20 times slower and has nothing to find in
// it: the grids beyond the main one are then left out.
const raced = true
