// Package fault injects failures, latency and chosen values into calls, to
// show in tests and on game days that the stages around it, and the code
// around the pipeline, cope: the chaos strategies of Polly v8, as one stage.
//
// The stage is off unless [Config].Enabled is set, and each fault is off
// while its rate is 0. Enabled, it draws for every call that passes through
// it, at the configured rates:
//
//   - a Transient, Throttled (with a retry-after hint) or Permanent error,
//     marked with its kind so that the retry, the breaker and the budget treat
//     it as they would the dependency's own;
//   - a chosen value, with the verdict the pipeline's classifier would have
//     given it (a 503 response, say);
//   - latency: a wait on the pipeline's clock before the call goes on, ended
//     early by the call's context, so a timeout around it still fires.
//
// An error or value fault answers in place of the work, which does not run.
// The injected errors match [ErrInjected].
//
// The draws come from [Config].Rand: give it a seeded source and the same
// sequence of calls gets the same faults, run after run. With the default
// source the stage allocates nothing and takes no lock.
//
// # Where it goes
//
// Innermost, in place of the dependency it impersonates, so that every stage
// sees the faults as it would see real ones:
//
//	timeout -> retry -> breaker -> hedge -> fault -> fn
//
// Inside the hedge each copy draws on its own, as independent requests would.
package fault
