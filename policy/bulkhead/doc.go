// Package bulkhead bounds how many calls run at once: at most MaxConcurrent
// inside, at most MaxQueue waiting for a slot (none by default), each for at
// most MaxWait, and the rest refused at once.
//
// A bulkhead protects two things. A dependency that slows down holds each call
// longer, so, at the same rate of calls, more of them are in flight; without a
// bound they pile up as goroutines, connections and memory in the caller, and
// as a queue in the dependency that makes it slower still. And a process that
// calls several dependencies keeps one slow dependency from taking every
// worker: each gets its own compartment, as a ship's hull does.
//
// Build one [Bulkhead] per dependency with [New] and make it a stage with
// [Guard]:
//
//	b, err := bulkhead.New(bulkhead.Config{MaxConcurrent: 32})
//	...
//	p := pipeline.New(timeoutStage, retryStage, bulkhead.Guard[*http.Response](b), breakerStage, hedgeStage)
//
// A refusal is a *pipeline.StopError of Stage "bulkhead" with a self-imposed
// Throttled verdict: no breaker counts it, no retry budget pays for it, and a
// retry stage outside stops on it (after its refusal pause) rather than retry,
// since the bulkhead, not the dependency, said no. A queued call honours its
// context: it gives up, with pipeline.Interrupted's error, as soon as the
// context ends.
//
// # Where it goes
//
// Inside the retry, so that every attempt holds a slot while it runs and a
// retry waits for one like any call, and outside the breaker, so that the
// time a call queues is not counted as the dependency's latency by the
// breaker's slow-call trip: timeout -> retry -> bulkhead -> breaker -> hedge
// -> fn. A hedge inside the bulkhead runs its copies in the attempt's one
// slot; put the bulkhead inside the hedge if every copy must hold one.
//
// A call's criticality (package criticality) decides how much it may take:
// its level, a share of the slots (Config.Shares), and its tenant, a part of
// its level's slots (Config.TenantShare), so that one noisy tenant cannot
// take a level's share.
//
// The limit is fixed unless [Bulkhead.SetLimit] moves it; package adaptive is
// a bulkhead whose limit a rule moves, from the latency it measures.
package bulkhead
