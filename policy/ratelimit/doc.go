// Package ratelimit admits calls at a steady rate: a token bucket of Rate
// tokens a second and Burst tokens deep, shared by every call that goes
// through it.
//
// A rate limit protects a dependency that has a quota (a partner API that
// allows 100 requests a second) or one whose cost is per request rather than
// per call in flight. It does not bound concurrency: for that, see package
// bulkhead, or package adaptive for a limit that finds itself.
//
// Build one [Limiter] per quota with [New] and make it a stage with [Guard]:
//
//	l, err := ratelimit.New(ratelimit.Config{Rate: 100})
//	...
//	p := pipeline.New(retryStage, ratelimit.Guard[*http.Response](l), breakerStage, ...)
//
// A call that finds no token waits for one up to Config.MaxWait (by default
// it does not wait), never past its context's deadline; otherwise it is
// refused at once with a *pipeline.StopError whose RetryAfter is the time
// until the next token. The refusal's verdict is Throttled and self-imposed,
// so a breaker never counts it, a retry budget never pays for it, and a retry
// stage outside stops (after its refusal pause) rather than retry: the
// limiter, not the dependency, said no, and asking again sooner than the hint
// would only be refused again.
//
// # Where it goes
//
// Inside the retry stage, a limiter counts attempts, retries included, which
// is what a dependency's quota counts: timeout -> retry -> ratelimit ->
// breaker -> hedge -> fn. Outside it, it counts whole calls, which suits a
// limit on what a caller of ours may ask (a server's admission control, see
// package shed). A hedge inside the limiter sends copies the limiter does not
// see; put the limiter inside the hedge if every copy must pay.
//
// # Why not golang.org/x/time/rate
//
// x/time/rate is the ecosystem's token bucket and this package's model; it
// is not used for three reasons. A goroutine that reads the clock and is
// descheduled before it takes the limiter's lock moves the bucket's clock
// back and is credited the same tokens twice, so under load it can admit more
// than Rate × t + Burst in a stretch t (docs/ratelimit.md shows a run that
// admits 89 where the bound is 79); Reserve allocates on every call that
// waits; and the core module depends on nothing but the standard library and
// clockwork. This limiter keeps the bucket as one word updated by
// compare-and-swap, in which a stale reading cannot add tokens.
package ratelimit
