// Package budget is a retry budget: a token bucket shared by every caller of one
// dependency, which pays for retries and hedges so that the extra load a fleet of
// callers adds to a failing dependency stays bounded.
//
// A per-call attempt limit cannot stop a retry storm: with three attempts per call,
// every caller multiplies its load by three exactly when the dependency can least
// afford it, and each of them believes it is being reasonable. A budget caps the
// extra load of all callers together instead: first attempts are free, every extra
// attempt (a retry or a hedge) costs one token, and tokens come back only slowly:
// a little with each successful attempt ([Config].DepositPerSuccess) and at a fixed
// rate with time ([Config].RefillPerSecond). When the dependency fails everything,
// retries are therefore limited to the refill rate plus what the bucket held,
// however many callers there are.
//
// The budget is consulted by the retry stage (package policy/retry) before each
// retry, and by a hedging stage before each hedge. The first attempt of a call is
// never charged, and neither is a refusal imposed by our own stages.
//
// A nil *Budget is valid and means "unlimited": every withdrawal succeeds. A
// zero Budget is not: build one with [New]; its methods panic, naming New.
//
// The package is a leaf: it imports only the standard library and clockwork.
// A Budget is safe for concurrent use; one mutex guards its state, and refill is
// computed from the clock on each call, so it runs no goroutine.
package budget
