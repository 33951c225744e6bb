// Package breaker is the circuit breaker of the pipeline library: it stops
// sending attempts to a dependency that is failing, so that neither the caller nor
// the dependency drowns, and lets a few probes through to find out when it has
// recovered.
//
// # States
//
// A [Breaker] is Closed, Open, HalfOpen, Recovering or Isolated ([State]).
// Closed admits everything and samples every
// attempt. Any trip condition opens it: Config.ConsecutiveFailures failures in a
// row; a failure ratio over the trip window that reaches the effective trip
// point (Config.FailureRatio, if set, lowered by the relative failure ratio of
// Config.Failures); or a share of slow calls over the trip window that reaches
// Config.SlowCallRatio, where a call is slow above the effective slow-call
// threshold (Config.SlowCallThreshold, if set, lowered by the measured normal
// latency of Config.SlowCalls). Open refuses everything until its break ends;
// the first attempt after that makes it HalfOpen and becomes a probe. HalfOpen
// admits at most Config.HalfOpenProbes probes at a time, and judges a
// successful probe slow above Config.ProbeSlowFraction of the slow-call
// threshold; once its fast probes lead its slow ones by Config.ProbeSuccesses
// it closes, and one failed probe, or slow probes leading the fast ones by
// Config.ProbeSlowLead, open it again with a longer break. Isolated is a
// manual Open that never ends by itself; [Breaker.IsolateFor] is a manual Open
// for a given time, which is not a trip and ends, as a break does, in HalfOpen.
//
// Reading the state ([Breaker.State], [Breaker.Snapshot]) never changes it: an
// Open breaker whose break has elapsed reads HalfOpen, and only the next admission
// actually moves it.
//
// # Recovery: the trickle and the ramp
//
// By default recovery is a cliff: the break refuses everything, the probes
// succeed, and the whole load arrives at once at a dependency that has served
// a handful of requests since it broke. With Config.Recovery set
// ([Recovery]), the breaker comes back in two steps.
//
// During a break that a trip started, it lets a trickle of attempts through as
// probes: Recovery.Initial of those offered (deficit accounting), and at least
// one every Recovery.TrickleEvery, no more at once than Config.HalfOpenProbes.
// A trickled probe that succeeds fast ends the break (HalfOpen, with that
// success counted); one that fails or is slow changes nothing. So the breaker
// learns within about a second that the dependency is back, however long its
// break.
//
// When its probes succeed (or its slow probes lead, which would otherwise
// re-open it) it becomes Recovering instead of Closed, and admits a fraction p
// of the attempts offered, refusing the rest as Open does (the refusal carries
// no retry-after hint). p climbs linearly from Recovery.Initial to 1 over
// Recovery.Fraction of the time the breaker was open (clamped to
// [Recovery.Minimum, Recovery.Maximum]). A slow call (by the slow-call trip's
// own threshold) holds p until Config.ProbeSuccesses fast calls in a row
// release it; a failure halves p (not below Initial) and doubles the ramp's
// length (not beyond Maximum), once per round of attempts admitted since the
// last such setback; Config.ConsecutiveFailures failures in a row re-open the
// breaker with the grown break. Admission is deficit accounting, with no
// randomness. Nothing during a ramp feeds the trip window. When p reaches 1
// the breaker reads Closed, and the next admission or outcome closes it. A
// dependency that keeps answering slowly keeps the breaker Recovering: alert
// on a ramp that has lasted much longer than Snapshot.RampLength.
//
// A breaker that closed on its own after a trip reads a [Breaker.Pressure]
// falling from 1 to 0 over a trip window, so that a hedge adds no load to a
// dependency that has only just taken the whole load back.
//
// # Evidence
//
// Only a failure ([outcome.Verdict.Failure]: Transient and not self-imposed) and
// a success (Kind OK) are evidence. Throttled, Permanent, self-imposed and
// canceled outcomes neither count as failures nor end a run of failures. The
// breaker is consulted for every attempt, not every logical call.
//
// # Measured normals
//
// By default the breaker measures two things about its dependency, each over a
// window much longer than the trip window: the median latency of its successful
// attempts over 5 minutes ([Breaker.NormalLatency]), and the failure rate of its
// evidence over 5 minutes ([Breaker.NormalFailureRate]). A call more than 3 times
// the normal latency is slow; a trip window whose failure ratio reaches 5 times
// the normal rate (never less than 5%, with at least two failures) opens the
// breaker. A measurement only ever lowers a configured constant, never raises it.
//
// Only attempts recorded while Closed feed the baselines (successes the latency
// one, successes and failures the rate one); probes, a ramp's attempts and
// stragglers do not.
// Opening, closing, Isolate and Reset clear the trip window but never the
// baselines: they describe the dependency, not a decision about it. A baseline
// that has seen too few samples in its window (20 successes, 100 outcomes) reads
// "none", and its trip is disarmed; an idle baseline decays to none by itself.
//
// Each baseline races the trip window during an incident, and must win by a
// factor of two: New refuses a SlowCalls whose Quantile × Window is under
// 2 × SlowCallRatio × TripWindow, and a Failures whose Window / Multiple is under
// 2 × TripWindow. A zero Failures.Window is derived to meet that exactly, and a
// relative trip left at its zero value steps aside when that would take more than
// an hour.
//
// # Shadow mode
//
// A breaker in shadow mode (Config.Shadow, [Breaker.SetShadow]) refuses
// nothing, and otherwise does everything a real breaker does: it trips,
// breaks, probes, ramps and measures its normals on the attempts a real
// breaker would have admitted, and raises the same events, marked Shadow. An
// attempt a real breaker would have refused raises its Rejection, is admitted
// all the same, and its outcome is ignored ([Ticket.Shadow]): a real breaker
// would never have run it, so it is no evidence. Fed the same attempts, a
// shadow breaker and a real one make the same transitions. Put a new
// configuration in shadow mode beside the breaker in use to see, from its
// events, what it would have refused, before it refuses anything.
//
// # Use
//
// Inside a pipeline, put [Guard] after the retry stage. Outside one, call
// [Breaker.Admit] before an attempt and [Breaker.Record] or [Breaker.Done] after
// it, exactly once per admitted Ticket.
//
// # Concurrency
//
// A Breaker is safe for concurrent use. Its state sits behind one sync.Mutex that
// is never held while user code runs. Events ([Transition], [Rejection]) are
// queued under that lock and delivered to Config.OnEvent after it is released,
// one at a time, in the order they happened, each exactly once; when several
// goroutines produce events at once, whichever is already delivering delivers
// the others' too, so a call may return before its own events have been
// delivered. One call delivers at most two batches of at most 256 events; what
// is left (a hook that calls the breaker can keep raising events) waits for the
// next call, which delivers it first. A panicking hook never corrupts the
// state: every outcome is recorded before events are delivered, and an
// admission whose delivery panicked is withdrawn.
package breaker
