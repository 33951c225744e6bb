// Package pipelinetest checks that a [pipeline.Policy] behaves as every stage of a
// pipeline must, in the spirit of testing/slogtest: call [Run] from your own test
// with a constructor for your policy.
//
// The suite checks that the policy passes the value and error of the work through,
// propagates the caller's context (its values and its deadline), returns promptly
// when the caller cancels, leaves no goroutine behind after a call returns, never
// swallows a panic and is not wedged by one, and survives concurrent use (run
// the suite with -race for that check to mean anything).
//
// Each check runs on virtual time inside a [testing/synctest] bubble and builds a
// fresh policy there. After every check the suite waits for the bubble to settle
// and fails if any goroutine the check started is still there; [Goroutines]
// offers the same count to a stage's own tests.
package pipelinetest
