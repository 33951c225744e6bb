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
// # Trusted work, and guarded work
//
// By default the stage trusts the work to honour its context, as net/http,
// database/sql and gRPC do: the work runs where it would without the stage, and
// the call returns when the work does. Work that ignores its context then holds
// the call until it returns, however late.
//
// With [Config].Abandon the stage distrusts the work: it asks the pipeline to
// guard it ([pipeline.Next.AbandonAfter]), so the work runs on a goroutine of
// its own. The stages inside the timeout run where they would anyway (on the
// caller's goroutine, or a hedge's timer's): every stage of this module honours
// its context, and the conformance suite (package pipelinetest) holds a
// caller's own stages to the same rule. When the deadline passes, the work gets
// a short grace period ([Config].Grace) to notice the canceled context. Work
// that honours its context returns within the grace, and its goroutine has
// ended before Execute returns. Work that ignores its context is abandoned: the
// attempt returns at once with an error matching pipeline.ErrAbandoned, the
// stage turns it into a Deadline stop, and the pipeline emits
// pipeline.Abandoned; the goroutine keeps running only until the work returns,
// then releases its value through the pipeline's Release hook, emits
// pipeline.LateReturn and exits. A panic in abandoned work is raised again on
// that goroutine, which ends the program as a panic in any goroutine would: it
// is never swallowed.
//
// # The returned value
//
// The stage's context lives on with the value it returns until the caller
// releases that value (see [pipeline.Next.Hold] and docs/values.md), so that a
// response body can be read after Execute returns; the deadline still applies.
//
// The stage measures time with the real clock, because context deadlines cannot
// run on any other; tests run it under testing/synctest.
package timeout
