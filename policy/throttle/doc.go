// Package throttle refuses, at random, a share of the calls to a dependency
// that has been rejecting them: the client-side adaptive throttle of the
// Google SRE book ("Handling Overload", client-side throttling).
//
// A dependency that is overloaded still spends effort on every request it
// rejects. When enough clients keep asking, rejecting is all it does. The
// throttle has each client reject the excess itself, before it is sent, in
// proportion to how much the dependency has been rejecting, so that what
// reaches the dependency is about what it can take, plus a margin.
//
// # The rule
//
// A [Throttle] counts, over a window of the last Config.Window (2 minutes),
// two numbers: requests, the attempts it was asked to admit, and accepts,
// the requests the dependency processed. It refuses each new attempt with
// the probability
//
//	max(0, (requests - K × accepts) / (requests + 1))
//
// at most Config.MaxRejection (0.9). While the dependency accepts at least
// one request in K (K is Config.K, 2 by default), the probability is 0 and
// the throttle is invisible. Past that point, if the dependency accepts what
// it has the capacity for and rejects the rest, the throttle settles where
// the client sends about K times what the dependency accepts: the book's
// balance between the effort wasted on rejections and how soon a recovery
// shows.
//
// # What counts
//
// A request counts in the window's slice of its admission:
//
//   - A refused attempt is a request, at once, and no accept: refusals keep
//     the probability up while the dependency keeps rejecting.
//   - An admitted attempt counts when it is recorded ([Throttle.Record]):
//     an OK or Permanent verdict is a request and an accept (a 400 is the
//     dependency's answer to a request it processed); a Transient or
//     Throttled one is a request and no accept (a 503, our timeout, a 429).
//   - A verdict of our own (self-imposed: a breaker inside refused) or of
//     the caller (canceled: its cancellation or its deadline) counts for
//     nothing, so a caller's cancellations never make the throttle refuse;
//     nor does an attempt that panicked.
//   - An attempt in flight counts for nothing until it is recorded: counted
//     before its answer, it would look like a rejection, and two calls at
//     once to a new throttle would see the second refused half the time.
//
// # The window
//
// The window is a ring of Config.Buckets (12) slices of Window/Buckets
// (10 s) each, and slides a slice at a time: the counts cover the slice
// of now and the Buckets-1 before it, between eleven twelfths of the
// window and all of it by default. Two minutes is the book's
// figure: long enough that a few seconds' bad luck do not swing the
// probability, short enough that history the dependency has left behind is
// forgotten within minutes. An attempt recorded after its slice has left
// the window counts for nothing.
//
// # Recovery, and why a cap
//
// Refusals count as requests, so once the dependency accepts again its
// accepts outweigh them only gradually: the share of attempts that goes out
// grows geometrically (more accepts, more attempts admitted), and letting go
// of a recovered dependency takes minutes. Against a dependency that rejects everything, the rule
// alone refuses all but one in requests+1 attempts, so that the share it
// starts from is tiny. Config.MaxRejection keeps a share of the attempts
// going out (a tenth, by default), which an overloaded dependency can
// reject cheaply and which shortens the recovery; 1 means no cap.
//
// # Throttle or breaker
//
// A circuit breaker (package breaker) turns a dependency off: past its
// thresholds it refuses every call for a break, then probes. It needs
// thresholds (a failure rate, a minimum of calls, a break), it can watch
// latency as well as errors, and it fails fast entirely, which suits a
// dependency that is down. The throttle never refuses everything, needs no
// threshold, and sheds in proportion to how much the dependency is
// rejecting, which suits one that is overloaded: it serves part of the load
// and would serve less if it had to reject all of it. It also lets go
// gradually, over minutes, where a breaker's recovery is set by its break
// and its probes. They combine: a
// throttle trims the load of an overloaded dependency, and a breaker inside
// or outside it turns off a dead one; the refusals of each are self-imposed,
// so neither counts the other's.
//
// # What the other stages see
//
// A refusal is a *pipeline.StopError of Stage "throttle", Reason
// pipeline.DependencyUnavailable (it matches pipeline.DependencyUnavailable,
// as a breaker's refusal does: both say the dependency has been failing us)
// and no retry-after hint, with a self-imposed Throttled verdict: no breaker
// counts it, no budget pays for it, and a retry outside stops rather than
// retry it. Refusals emit pipeline.Stopped; the throttle has no events of its
// own. [Throttle.RejectionProbability] and [Throttle.Counts] read its state
// at any time, for health checks and telemetry.
//
// # Where it goes
//
// Inside the retry, so that every attempt counts and may be refused, as the
// book counts every request the client sends: timeout -> retry -> throttle
// -> breaker -> hedge -> fn. An attempt that never returns is never
// recorded, so give the pipeline a timeout: an attempt our timeout cuts is
// Transient, and a dependency that hangs then counts as one that rejects.
package throttle
