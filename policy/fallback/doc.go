// Package fallback replaces a failed call's result with a value of the
// caller's choosing: a cached copy, a default, a degraded answer.
//
// The stage runs the stages inside it, then asks [Config].When whether their
// result is one to replace; by default ([Failed]) it is every failure except
// the caller's own cancellation: a breaker's refusal, exhausted retries, a
// deadline of our own, a permanent failure, a value judged a failure. For a
// result it replaces, it calls [Config].Func with the call's context and the
// result, and returns what Func returns:
//
//   - Func returns a value and a nil error: the call succeeds with that value
//     (verdict OK). The replaced result's value, if any, is released through
//     the pipeline's Release hook once Func has returned, so Func may read it
//     but must not return it.
//   - Func returns an error: nothing is replaced. The call returns the
//     original result, its value kept and its verdict unchanged, with an
//     [*Error] holding both Func's error and the original one; the value Func
//     returned, if any, is released.
//   - Func panics, or When does: the panic goes on to the caller, and the
//     original value is released first.
//
// A call whose caller has canceled (its context is done for a reason other than
// one of our own timeouts) is never replaced, whatever When says: nobody is
// waiting for the value.
//
// The original error stays reachable: Func receives it in the result (never
// nil for a failure: a value judged a failure comes with a
// *pipeline.ValueError), the [Executed] event carries it, and a failed
// fallback's [*Error] wraps it.
//
// # Where it goes
//
// Outermost, around the whole card, so that it sees what the caller would
// otherwise get and the stages inside see every real attempt:
//
//	fallback -> timeout -> retry -> breaker -> hedge -> fn
//
// Inside a retry it would turn failures into successes before the retry could
// try again; inside a breaker, the breaker would never see the failures it
// replaced.
package fallback
