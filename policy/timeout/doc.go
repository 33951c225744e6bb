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
// The stages inside a timeout run on the caller's goroutine: every stage of this
// module honours its context, and the conformance suite (package pipelinetest)
// holds a caller's own stages to the same rule. Only the caller's work is not
// trusted to: the stage asks the pipeline to guard it ([pipeline.Next.AbandonAfter]),
// so the work runs on a goroutine of its own. When the deadline passes, the work
// gets a short grace period ([Config].Grace) to notice the canceled context.
// Work that honours its context returns within the grace, and its goroutine has
// ended before Execute returns. Work that ignores its context is abandoned: the
// attempt returns at once with an error matching pipeline.ErrAbandoned, the
// stage turns it into a Deadline stop, and the pipeline emits
// pipeline.Abandoned; the goroutine keeps running only until the work returns,
// then discards the result (emitting pipeline.LateReturn) and exits. A panic in
// abandoned work is raised again on that goroutine, which ends the program as a
// panic in any goroutine would: it is never swallowed.
//
// The stage measures time with the real clock, because context deadlines cannot
// run on any other; tests run it under testing/synctest.
package timeout
