// Package bench measures the pipeline library side by side with the libraries a
// user would pick instead, sony/gobreaker and failsafe-go, and with the floor
// primitives (a bare call, a clock read, an uncontended mutex,
// context.WithTimeout, a goroutine round trip) in one run on one machine.
//
// It is a nested module so that the library itself never depends on its peers.
// The compositions each library runs are built in compose.go, one function per
// library and composition, so that what is compared is visible in one place; the
// benchmarks are in bench_test.go, named so that the rows of one composition line
// up: BenchmarkBreaker/ok/ours, BenchmarkBreaker/ok/gobreaker,
// BenchmarkBreaker/ok/failsafe.
//
// The command cmd/benchreport runs the benchmarks several times and prints a
// markdown table of medians and of the ratios ours/peer and ours/floor, with the
// target of each row; docs/performance.md explains the numbers.
package bench
