// Package standard builds the recommended pipeline for one dependency in one
// call, with the result type written once:
//
//	p, err := standard.New[*http.Response](standard.Config{})
//
// The pipeline is the one the project's documentation recommends,
//
//	timeout -> retry (funded by a retry budget) -> circuit breaker -> hedge -> attempt timeout -> fn
//
// with one budget shared by the retry and the hedge, one latency estimator for
// the hedge, a breaker that measures its dependency's normal latency and
// failure rate and ramps traffic back up after a break, and every setting
// defaulted and overridable from one [Config]. docs/standard.md gives each
// default and its reason.
package standard
