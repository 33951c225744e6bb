// Package retry is the retry stage of a pipeline: it runs the stages inside it
// again when an attempt fails in a way a retry can fix, waiting a backoff between
// attempts and paying for each retry from a shared retry budget.
//
// # What is retried
//
// The stage reads the verdict the pipeline gave each attempt; it never
// classifies errors itself. Transient and Throttled verdicts are retried.
// Permanent verdicts are not, nor is the caller's own cancellation, nor a refusal
// by one of our own stages (an open circuit breaker inside the retry): such a
// refusal stops the call at once, after a short pause ([Config].RefusalPause), so
// that a caller that loops on refusals cannot spin.
//
// # Backoff
//
// [Config].MaxAttempts counts every attempt, the first included (3 by default).
// The default [Exponential] backoff waits base x 2^(n-2) before attempt n, with
// base 100 ms after a Transient failure and 1 s after a Throttled one, capped at
// 30 s and then jittered ([FullJitter] by default). A server's retry-after hint
// replaces the backoff: it is used as given, capped at the backoff's maximum,
// without jitter. [Constant] and [BackoffFunc] cover the other cases. A backoff is
// a pure function of the attempt number, the verdict and a random source, so it
// can be tested and simulated exactly.
//
// # Deadlines and cancellation
//
// The stage never sleeps past the call's deadline: a wait that would reach it
// stops the call at once with the Deadline reason. The waits use the pipeline's
// clock and end as soon as the caller cancels.
//
// # Budget
//
// With a [budget.Budget] in [Config].Budget, each retry takes one token before it
// waits; when none is left the call stops with the BudgetExhausted reason and the
// time until the budget holds a token. Each successful attempt deposits into the
// budget. The first attempt is never charged, and neither are refusals.
//
// # Results
//
// Every stop returns a *[pipeline.StopError] carrying the reason, the number of
// attempts that ran and the last attempt's error; the result's value is the last
// attempt's value, so a last 503 response is still there to read. See
// docs/retry.md for the reasoning and examples.
package retry
