package pipelinehttp

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/internal/hedgerule"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/outcome"
)

// TimeoutHeader is the request header that carries the time an attempt has
// left, in whole milliseconds, from a transport with PropagateDeadline to a
// server behind [ServerDeadline]. It is Envoy's x-envoy-expected-rq-timeout-ms:
// a relative time, so the two hosts' clocks need not agree, and the header a
// service mesh already reads and writes, so a sidecar between the two
// honours it too.
const TimeoutHeader = "X-Envoy-Expected-Rq-Timeout-Ms"

// minMedianSamples is how many attempts a host's estimator must have
// measured before the transport trusts their median to refuse an attempt
// with less time left (see Config.PropagateDeadline): the hedge's
// DefaultMinSamples.
const minMedianSamples = hedgerule.DefaultMinSamples

// deadlineHeader readies r, the copy of the request an attempt with ctx
// sends to a host whose attempts est measures, for a host the request's
// deadline goes to: it sets TimeoutHeader to the time ctx has left, rounded
// down to the millisecond, on a copy of the caller's header map (never
// the caller's own). If less time is left than the median of the host's
// recent attempts, it returns the error of a refusal instead: the answer
// would come after the caller gave up.
func deadlineHeader(ctx context.Context, r *http.Request, est *latency.Estimator, host Host) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		return nil
	}
	// A context's deadline is read on real time (the bubble's, under
	// testing/synctest), whatever the transport's clock.
	left := time.Until(deadline)
	if median, n := est.Quantile(est.Now(), 0.5); n >= minMedianSamples && left < median {
		return outcome.Mark(&pipeline.StopError{Stage: stage, Name: host.String(), Reason: pipeline.TooLittleTime},
			outcome.Verdict{Kind: outcome.Throttled, SelfImposed: true})
	}
	h := r.Header.Clone()
	if h == nil {
		h = make(http.Header, 1)
	}
	h[TimeoutHeader] = []string{strconv.FormatInt(max(left.Milliseconds(), 0), 10)}
	r.Header = h
	return nil
}

// stage is the Stage of the stop errors the transport makes itself: the
// refusal of an attempt with too little time left.
const stage = "http"

// ServerDeadline returns a handler that runs h with each request's context
// bounded by the time its caller said it has left (TimeoutHeader, as a
// transport with PropagateDeadline sends it): the request's deadline becomes
// the earlier of the one it had and now plus that time, so the header can
// shorten a request's deadline, never lengthen or remove it, and any caller
// may send it: at worst it cuts its own request short. A request whose
// caller has no time left is answered 504 Gateway Timeout without calling
// h. A header that is not a whole number of milliseconds is ignored.
func ServerDeadline(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ms, err := strconv.ParseInt(r.Header.Get(TimeoutHeader), 10, 64)
		switch {
		case err != nil || ms < 0: // none, or not a time
			h.ServeHTTP(w, r)
			return
		case ms == 0:
			http.Error(w, "the caller has no time left", http.StatusGatewayTimeout)
			return
		}
		d := time.Duration(min(ms, int64(maxHeaderTimeout/time.Millisecond))) * time.Millisecond
		ctx, cancel := context.WithTimeout(r.Context(), d) // keeps an earlier deadline the request had
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// maxHeaderTimeout is the longest time a header is read as: past it the
// arithmetic of deadlines would overflow, and no call waits that long.
const maxHeaderTimeout = 100 * 365 * 24 * time.Hour
