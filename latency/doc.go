// Package latency estimates latency quantiles over a sliding window of time, for
// the stages that adapt to how fast a dependency currently answers.
//
// An [Estimator] keeps a histogram of log-scaled buckets (four per power of two,
// from 16.4 µs to 34.4 s, each under 19% wide, plus one for everything under
// 16.4 µs), kept per time slice in a ring, with a running total and each
// bucket's sum so that a read never sums slices and places a value by its
// bucket's mean: a latency that holds steady reads as itself at the median (a
// high quantile of it reads up to half a bucket above). It holds the last span
// of samples, give or take one slice, and forgets them whole slices at a time,
// so an idle window decays to "no samples" instead of reporting a stale figure. Reading a quantile is memoized: under
// steady traffic it is recomputed once per samples/32 new samples, and costs a
// few comparisons otherwise. A quantile lies in the same bucket as the exact
// order statistic: within 19% of it below 34.4 s.
//
// An Estimator has a mutex and a clock, to be shared, and is safe for
// concurrent use: the hedge stage reads its hedge delay from an Estimator's
// p95 over 30 s, and the number of samples behind it, which tells it whether
// the estimate can be trusted yet. The circuit breaker and the adaptive limit
// keep the same histogram under locks of their own.
//
// The package imports only the standard library, clockwork and the module's
// internal packages.
package latency
