// Package pipeline runs one unit of work, a [Func], through an ordered list of
// stages that protect the program from its dependency and the dependency from the
// program. The recommended order is
//
//	timeout -> retry (funded by a retry budget) -> circuit breaker -> hedge -> fn
//
// but any [Policy] composes with any other, and a caller's own stage is written the
// same way the built-in ones are.
//
// # How a call flows
//
// [New] composes stages, the first outermost. [Pipeline.Execute] hands the call to
// the first stage together with a [Next], its handle on the rest of the chain.
// Each stage decides whether, when and how often to call [Next.Run]; the last Run
// calls fn. Right after fn returns, the pipeline classifies the attempt once,
// with the rules of package outcome and the pipeline's [Options].Classifier, and
// every stage on the way out reads that one [outcome.Verdict] in the [Result].
//
// # What stages share
//
// Through Next, every stage (built-in or not) sees the same things: the attempt
// number ([Next.Attempt]), the pipeline's clock ([Next.Clock]), its event hook
// ([Next.Emit]) and the abandoning of work that ignores its context
// ([Next.AbandonAfter]). A stage that refuses or gives up returns a [StopError],
// the one error type every stage uses, with a [Reason].
//
// # Writing a stage
//
// A stage is a [Policy]: Execute(ctx, next) does its work around
// next.Run(ctx) and returns a [Result]. Implement [Described] too, so that
// its events are labelled and [Check] can judge where it stands. [Next]'s
// methods, by concern:
//
//   - Running the rest: [Next.Run] (any number of times, from any goroutine,
//     all returned before Execute does), [Next.WithAttempt] for a retry's
//     next attempt, [Next.Attempt], [Next.Inner] (what runs inside), and
//     [Next.AbandonAfter] for a timeout that distrusts the work.
//   - Stopping a call: [Next.Refuse] with a [*StopError]; [Next.ErrOf] for
//     the error to wrap when a result with no error was judged a failure.
//   - Values that hold resources: [Next.Discard] for a result dropped,
//     [Next.Hold] and [Next.Holds] for what must live as long as the value
//     returned.
//   - Events: [Next.Observed] before building one, [Next.Emit], and
//     [Next.Source], the labels they carry.
//   - Time: [Next.Clock] to wait on, [Next.Elapsed] to measure with, and
//     one reading shared by the stages of a call: [Next.Entered] for the
//     reading the stage outside handed in (or one taken now), [Next.At] to
//     hand a reading inward when nothing waits before Run, [Next.Onward] to
//     hand on the one received, [Next.SharesClock] to tell whether a stage's
//     own clock is the pipeline's. A reading is handed one stage at a time,
//     only by a stage that says so, so that a stage that waited (for a
//     permit, a backoff) never passes on a reading older than its wait.
//
// A limiter of your own (a semaphore, a rate limiter, a quota) needs no
// Execute: make it a [Gate], which admits a call, or refuses it with a
// [*StopError], and takes its [Permit] back with Release; a [Learner] also
// learns from each call's verdict, with Done. [Guard] makes a gate a stage,
// as the bulkhead, adaptive, rate-limit and quota stages are made: it
// refuses a call whose context is done without asking the gate, returns a
// refusal with the verdict [Next.Refuse] gives it, and gives the permit
// back once however the call ends: as it returns, when a value the
// pipeline keeps alive is released, or as a panic unwinds.
//
// # Concurrency
//
// A Pipeline and every built-in stage are immutable after construction and safe
// for concurrent use; build them once and share them. The built-in stages run on
// the caller's goroutine, with two exceptions: a hedge sends each extra copy of
// an attempt, with the stages inside the hedge, from a timer's goroutine, and a
// timeout that may abandon the work (timeout.Config.Abandon) runs the caller's
// work on a goroutine of its own. Every such goroutine has ended by the time
// Execute returns, except work that was abandoned, which ends when the work
// does. No stage holds a lock
// while the caller's code or an event hook runs.
//
// # Values that hold resources
//
// A value such as an *http.Response must be readable after Execute returns, and
// every value the pipeline discards (a retried attempt's, a hedge loser's) must
// be released. [Options].Release and [Options].WhenReleased tell the pipeline
// how; see docs/values.md.
package pipeline
