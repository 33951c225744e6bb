// Package adaptive limits how many calls run at once with a limit that finds
// itself: it measures the dependency's latency and cuts the limit when calls
// start to wait behind each other, and raises it while they do not.
//
// A fixed limit (package bulkhead) has to be guessed, and no guess is right
// both when the dependency is healthy and when it browns out. A dependency that
// serves N calls at once in time s serves N/s calls a second; push more at it
// and they queue, each waiting longer, while it serves no more. Too low a
// limit refuses calls the dependency could serve; too high lets the queue
// build, inside the dependency where it slows everyone and cannot be seen, and
// calls that time out in it still cost it their work. The right limit is the
// dependency's capacity, which changes with its health.
//
// # The rule
//
// The [Limiter] is a bulkhead whose limit is revised once per Config.Interval
// (1 s) from two readings of the same latency quantile, Config.Quantile (the
// p10, the fast end, which a queue delays first and the dependency's bad
// moments least):
//
//   - recent: over the answers of the interval just ended, successes and
//     failures alike (a call cut by a timeout says as much about a queue as a
//     slow success);
//   - baseline: over the successes in the window of a [latency.Estimator]
//     (Config.Estimator, 30 s by default), the dependency's recent normal.
//
// If recent is more than Config.Tolerance (1.5) times baseline, calls are
// queueing: the limit is cut to limit × baseline / recent, the concurrency at
// which the latency would be back to its baseline if the queue were all
// there was, keeping between half and four fifths of it. If not, and the calls
// used at least half the limit, it grows by its square root. A Throttled
// answer from the dependency (a 429) cuts it by a fifth. It stays within
// Config.MinLimit and Config.MaxLimit. This is the gradient rule of Netflix's
// concurrency-limits (Gradient2), applied per interval rather than per call,
// to a low quantile rather than a mean, so that it compares like with like
// whatever the latency's spread.
//
// A latency rule cannot tell a queue of its own making from a dependency that
// became slower on its own (a brownout): both raise the latency. It finds out
// by acting: a cut shortens a queue but not a slowdown. So if the revision
// after a cut finds the latency no better (above 0.9 times what made the cut),
// the limiter takes the recent latency as its baseline (a revision of kind
// [Slower]) and holds the limit; from there it grows again until the slower
// dependency's own queue shows. It keeps that baseline, measured with the
// queue drained, until the latency falls below it by more than the tolerance,
// rather than hand over to the estimator once its window has filled with the
// slower latency: the window also fills with the waits of a queue that
// lingers, and a baseline that follows them lets the limit creep up until
// calls time out. Without the step, a brownout would cut the limit to its
// minimum until the estimator's window forgot the healthy latency.
//
// docs/adaptive.md has the reasoning and the simulation that tested it.
//
// # What the other stages see
//
// A refusal is a *pipeline.StopError of Stage "adaptive" with a self-imposed
// Throttled verdict, as a bulkhead's: no breaker counts it, no budget pays
// for it, and a retry outside stops rather than retry it. Its RetryAfter is
// the median latency at the last revision, roughly when a slot frees.
//
// # Where it goes
//
// As a bulkhead does: inside the retry, so that each attempt holds a slot and
// is measured, and outside the breaker, so that queueing in the limiter is not
// the breaker's latency: timeout -> retry -> adaptive -> breaker -> hedge ->
// fn. The limiter measures from the moment a call has its slot to the moment
// the stages inside return, so a hedge inside makes hedged calls look as fast
// as their winner. Share the hedge's estimator and set Config.FedElsewhere,
// or give the limiter its own, by default of the same 30 s window.
//
// [Revision] events report every revision that moves the limit or its
// baseline, with the limit, the peak in flight and the queue;
// [Limiter.Snapshot] reads them at any time.
package adaptive
