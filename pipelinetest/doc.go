// Package pipelinetest checks that a [pipeline.Policy] behaves as every stage of a
// pipeline must, in the spirit of testing/slogtest: call [Run] from your own test
// with a constructor for your policy, or [RunWith] to observe the run through
// hooks.
//
// The suite checks that the policy passes the value and error of the work through
// (and reports a failure to the stages outside it as one, never as OK)
// (also of work that takes time), propagates the caller's context (its values and
// its deadline), returns promptly when the caller cancels, also when it is
// saturated with calls, holds no lock across next.Run, leaves no goroutine behind
// after a call returns, never swallows a panic and is not wedged by one, and
// survives concurrent use (run the suite with -race for that check to mean
// anything). The work functions of the suite are safe for concurrent calls, so a
// policy may run next.Run several times at once.
//
// Each check runs on virtual time inside a [testing/synctest] bubble and builds a
// fresh policy there. After every check the suite waits for the bubble to settle
// and fails, printing their stacks, if goroutines the check started are still
// there; then it releases its work and lets virtual time pass so that they can
// end. A goroutine blocked for good on something of the policy's own fails its
// check and stays parked, without stopping the other checks. [Goroutines] offers
// the bubble's goroutine count to a stage's own tests.
package pipelinetest
