// Package hedge sends a second copy of a slow attempt and keeps whichever copy
// answers first.
//
// A few slow calls dominate a service's tail latency, and most of them are slow
// for reasons that a second copy, sent to another connection or replica, does not
// share. The hedge stage waits a delay that only a small fraction of attempts
// outlive, the p95 of the latency it measures, and if the
// attempt is still running then, sends another copy. The extra load is bounded by
// construction: about 1 - Quantile of the attempts, and never more than the
// budget pays for.
//
// # When a call is hedged
//
// A hedge is sent only when all of these hold:
//   - the call is marked repeatable, with [Repeatable] on its context or
//     Config.Repeatable for the whole stage: a copy must be safe to run twice;
//   - the estimator holds at least Config.MinSamples (20) samples, so the delay is
//     a measurement and not a guess;
//   - the breaker, if the stage has one, is Closed and its
//     [breaker.Breaker.Pressure] is below one half: hedging must
//     not push a struggling dependency over its trip point; it is asked when the
//     call starts and again when the hedge is due;
//   - the budget, if the stage has one, pays one token for the hedge when it is
//     due (and gets it back if a stage inside refuses the copy);
//   - the call has no acceptable result yet, and its context is not done.
//
// The delay is the estimator's Config.Quantile over its window (30 s by default),
// and never below Config.MinDelay (10 ms). With Config.MaxAttempts above 2, each
// further hedge is due one more delay after the previous one.
//
// # Who wins
//
// The first copy runs on the caller's goroutine; each hedge runs on the goroutine
// of the timer that sent it, so a call that is never hedged starts no goroutine.
// The first acceptable result wins: OK, or a Permanent failure, which a copy of
// the same request would only repeat. The stage then cancels every other copy,
// waits for each to return, and releases its value through the pipeline's
// [pipeline.Options].Release hook, so that a response body can be closed; the
// winner's context lives on until its value is released (see
// [pipeline.Next.Hold]). A Transient or Throttled failure
// does not end the race while another copy runs; if every copy fails, the call
// returns the failure that came last. Either way no copy is running when Execute
// returns. A panic in any copy is raised again on the caller's goroutine once the
// other copies have returned.
//
// # What the other stages see
//
// Place the hedge inside the breaker and the retry, as in the recommended
// pipeline timeout -> retry -> breaker -> hedge. Then:
//   - the breaker admits one attempt and records one verdict for the copies
//     together: the winner's (or the last failure's), with the time the caller
//     waited. Losing copies are not breaker evidence;
//   - the retry stage sees one attempt, and pays a retry only if it fails;
//   - the estimator records every copy that succeeded, with its own duration, and
//     a first copy overtaken by a hedge with the time it had run when the hedge
//     won: a lower bound of its latency, above the delay, so that hedging, which
//     cancels the slowest attempts, does not pull the quantile that sets the delay
//     down. Failures are not latency samples;
//   - stages inside the hedge, and the pipeline's events, see each copy as an
//     attempt of its own, all with the attempt number of the call's attempt.
package hedge
