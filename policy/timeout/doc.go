// Package timeout bounds how long a call, or one attempt of it, may take.
//
// The same stage gives a whole-call deadline when it is placed outside a retry and
// a per-attempt timeout when it is placed inside one:
//
//	pipeline.New(wholeCall, retry, perAttempt, ...)
//
// The stage derives the context it passes inward with [context.WithTimeoutCause],
// so code inside can tell our timeout from the caller's deadline with
// [context.Cause]: ours is an [*Error], which matches context.DeadlineExceeded and
// outcome.ErrTimeout with errors.Is. An attempt that ends because of our timeout
// is Transient; one that ends because of the caller's deadline is the caller's
// cancellation and is never retried.
//
// # When the work ignores its context
//
// The stage runs everything inside it on a goroutine it owns and waits for it,
// for the deadline, and for the caller's cancellation. When the deadline passes
// it cancels the inner context and gives the work a short grace period
// ([Config].Grace) to notice. Work that honours its context returns within the
// grace, and its goroutine has ended before Execute returns. Work that ignores its
// context is abandoned: Execute returns at once with a [pipeline.StopError] and
// emits a [TimedOut] event with Abandoned set; the goroutine keeps running only
// until the work returns, then discards the result (emitting [LateReturn]) and
// exits. A panic in abandoned work is raised again on that goroutine, which ends
// the program as a panic in any goroutine would: it is never swallowed.
//
// The stage measures time with the real clock, because context deadlines cannot
// run on any other; tests run it under testing/synctest.
package timeout
