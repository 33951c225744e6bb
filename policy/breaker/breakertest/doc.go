// Package breakertest is the test kit of package breaker: rapid generators of
// configurations, recovery ramps, verdicts and durations, and [StateMachine], a
// property that drives a real breaker and a reference model of its state
// machine (the recovery ramp, shadow mode and IsolateFor included), written for
// clarity rather than speed, with random operations on a fake clock and checks
// after every step that they agree and that the breaker's invariants hold.
//
// Downstream code can property-test its own configuration with
//
//	func TestMyBreaker(t *testing.T) {
//		rapid.Check(t, breakertest.StateMachine(myBreakerConfig))
//	}
package breakertest
