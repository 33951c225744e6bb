package pipelinehttp

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
)

// markKey is the context key of a request's own marks.
type markKey struct{}

// marks are what a request's context says of it: its own replay choice and
// its route (see [Route]). They share one context value, so that a request
// costs one lookup however many it carries.
type marks struct {
	mode  mode
	route string
	stall time.Duration // the request's own stall timeout (StallTimeout); 0: none given, negative: off
}

// marksOf returns the marks ctx carries; the zero marks if none.
func marksOf(ctx context.Context) marks {
	m, _ := ctx.Value(markKey{}).(marks)
	return m
}

// mark returns a copy of ctx whose marks are its own, changed by f.
func mark(ctx context.Context, f func(*marks)) context.Context {
	m := marksOf(ctx)
	f(&m)
	return context.WithValue(ctx, markKey{}, m)
}

// mode is a request's own replay choice; the zero value means none.
type mode uint8

const (
	auto mode = iota
	replayMode
	onceMode
)

// Replayable returns a copy of ctx that marks the request it is given to as
// safe to send more than once, whatever its method: a POST the server
// deduplicates by a key of its own, say. The transport then retries and hedges
// it as it would a GET, provided its body can be sent again (it has none, or a
// GetBody). It undoes [SendOnce] on the same context.
func Replayable(ctx context.Context) context.Context {
	return mark(ctx, func(m *marks) { m.mode = replayMode })
}

// SendOnce returns a copy of ctx that marks the request it is given to as not
// safe to send more than once, whatever its method or headers: a GET that
// triggers an action, say. The transport then sends it at most once: it is
// never hedged, and retried only after an error that proves it never reached
// the server (see [Transport]). It undoes [Replayable] on the same context.
func SendOnce(ctx context.Context) context.Context {
	return mark(ctx, func(m *marks) { m.mode = onceMode })
}

// rewindable reports whether req's body can be sent again: it has none, or
// GetBody gives a fresh copy.
func rewindable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

// replayable reports whether req may be sent twice, as net/http judges it
// (Request.isReplayable, which its Transport uses to retry a request on a
// connection that broke): a safe method (GET, HEAD, OPTIONS, TRACE), or an
// Idempotency-Key or X-Idempotency-Key header (present, even with no value),
// and in either case a body that can be sent again. A mark of [Replayable] or
// [SendOnce] on the request's context (m, its mode) replaces the method and
// header rule.
func replayable(req *http.Request, m mode) bool {
	if !rewindable(req) {
		return false
	}
	switch m {
	case replayMode:
		return true
	case onceMode:
		return false
	}
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	if _, ok := req.Header["Idempotency-Key"]; ok {
		return true
	}
	_, ok := req.Header["X-Idempotency-Key"]
	return ok
}

// passThrough reports whether req is not a call the pipeline can run: a
// CONNECT tunnel or a protocol upgrade (a WebSocket), whose connection is
// meant to outlive the call and must not be timed, retried or hedged.
func passThrough(req *http.Request) bool {
	if req.Method == http.MethodConnect {
		return true
	}
	_, ok := req.Header["Upgrade"]
	return ok
}

// ErrNotResent is matched, with errors.Is, by the error of a request that
// failed in a way a retry could have fixed, and was not sent again because it
// is not replayable and may have reached the server.
var ErrNotResent = errors.New("pipelinehttp: not sent again: the request is not replayable and may have reached the server")

// notResent is the error of a request that was not sent again.
type notResent struct{ err error }

func (e *notResent) Error() string {
	return "pipelinehttp: not sent again (the request is not replayable and may have reached the server): " + e.err.Error()
}

func (e *notResent) Unwrap() error { return e.err }

func (e *notResent) Is(target error) bool { return target == ErrNotResent }

// resend is the stage between the retry and the breaker of the pipelines that
// carry requests which are not replayable. The breaker inside it has recorded
// each attempt's true verdict (a 503 to a POST is evidence like any other);
// resend then tells the retry outside it whether the request may be sent
// again: only if the attempt failed before the request reached the server
// (see neverSent) and, with sendAgain false, not even then. Any other
// retryable verdict becomes Permanent for the retry, and its error says why
// ([ErrNotResent]).
type resend struct {
	// sendAgain is false for a request whose body cannot be sent again: it
	// runs through a pipeline without a retry, and resend only labels its
	// errors.
	sendAgain bool
}

// Stage says that s is a stage of kind "resend".
func (resend) Stage() pipeline.StageInfo { return pipeline.StageInfo{Kind: "resend"} }

// Execute runs the attempt and judges whether the retry may send it again.
func (s resend) Execute(ctx context.Context, next pipeline.Next[*http.Response]) pipeline.Result[*http.Response] {
	r := next.Run(ctx)
	if !r.Verdict.Retryable() || (s.sendAgain && r.Err != nil && neverSent(r.Err)) {
		return r
	}
	r.Verdict = outcome.Verdict{Kind: outcome.Permanent}
	if r.Err != nil {
		r.Err = &notResent{r.Err}
	}
	return r
}
