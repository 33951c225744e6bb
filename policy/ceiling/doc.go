// Package ceiling cuts an attempt that runs far past what is normal for its
// dependency, without a number to guess: its limit is a multiple of the
// latency the stage measures.
//
// A fixed per-attempt timeout is either too tight for the slow end of healthy
// traffic or so loose that a stuck attempt holds its caller for most of the
// call's deadline. The ceiling stage reads the p95 (by default) of a
// shared [latency.Estimator] and lets each attempt run 3
// times that, never less than [Config].Floor (250 ms) and never more than
// [Config].Cap (10 s). Until the estimator holds [Config].MinSamples (50)
// samples the stage is unarmed and passes every attempt through: it cuts
// only on evidence.
//
// # What it measures
//
// Unless [Config].FedElsewhere is set, the stage records the duration of
// every successful attempt into the estimator. It always records the time a
// cut attempt ran, a lower bound of that attempt's latency: when a dependency
// slows down as a whole, the cuts raise the measured quantile and the ceiling
// rises with it (by the multiple each time the cuts reach the quantile, up to
// the cap), instead of cutting every attempt until the window forgets the
// faster past. Set FedElsewhere when the estimator is shared with a hedge
// stage placed inside the ceiling, which records the successes itself.
//
// # The cut
//
// An armed stage derives the attempt's context with
// [context.WithTimeoutCause], whose cause is the timeout stage's own
// [*timeout.Error], with the quantile the ceiling was measured from, so that
// it matches context.DeadlineExceeded and outcome.ErrTimeout exactly as a
// timeout's does: the cut attempt is Transient, so a retry outside tries again,
// and the stage returns a *pipeline.StopError with Reason Deadline and Stage
// "ceiling". Like the timeout stage it trusts the work to honour its context;
// for work that does not, put around it a timeout that may abandon the work
// (timeout.Config.Abandon). The context lives on with the value the attempt
// returns until that value is released (see pipeline.Next.Hold and
// docs/values.md).
//
// # Where it goes
//
// Inside the retry, where a per-attempt timeout goes, and outside the hedge,
// whose copies fire long before three times the p95:
//
//	timeout -> retry -> ceiling -> breaker -> hedge -> fn
//
// Placed outside the retry it would bound the whole call by one attempt's
// measure, which is rarely what anyone means.
//
// # Time
//
// The cut is a context deadline, which runs on real time only; the
// measurements are read on the estimator's clock. Tests run the stage under
// testing/synctest, where real time is virtual, with an estimator on real
// time.
package ceiling
