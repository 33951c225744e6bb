package pipelinehttp

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/resilience-go/pipeline/policy/timeout"
)

// Streaming returns a copy of ctx that marks the request it is given to as
// one whose body may take longer to read than the whole-call timeout (a
// download of unknown length, a stream of events): the whole-call timeout
// then ends when the response's headers are returned, as the attempt
// timeout always does, and the body is bounded by the stall timeout (see
// Config.BodyStallTimeout) and by ctx itself.
func Streaming(ctx context.Context) context.Context { return timeout.UntilReturn(ctx) }

// StallTimeout returns a copy of ctx that gives the request it is given to
// its own stall timeout, in place of Config.BodyStallTimeout: a read of its
// body that makes no progress for d fails. A negative d means none.
func StallTimeout(ctx context.Context, d time.Duration) context.Context {
	if d == 0 {
		d = -1 // zero would read as "not marked"
	}
	return mark(ctx, func(m *marks) { m.stall = d })
}

// StallError is the error of a read from a response body that made no
// progress for the stall timeout: no byte came for After. It matches
// context.DeadlineExceeded with errors.Is, and reports Timeout() true, as
// a network timeout does.
type StallError struct {
	Host  Host          // the host that sent the body
	After time.Duration // the stall timeout that passed
}

func (e *StallError) Error() string {
	return fmt.Sprintf("pipelinehttp: %s: the response body made no progress for %v", e.Host, e.After)
}

// Is reports whether target is context.DeadlineExceeded.
func (e *StallError) Is(target error) bool { return target == context.DeadlineExceeded }

// Timeout reports true: a stall is a timeout.
func (e *StallError) Timeout() bool { return true }

// stallOf is the stall timeout of a request with marks m to a host whose
// own is d: the mark's, if any; none if negative.
func stallOf(m marks, d time.Duration) time.Duration {
	if m.stall != 0 {
		d = m.stall
	}
	return max(d, 0)
}

// watchBody arms the stall timeout limit on resp's body, from host h, unless
// it has none to read.
func (t *Transport) watchBody(resp *http.Response, h Host, limit time.Duration) {
	if resp.Body == nil || resp.Body == http.NoBody {
		return
	}
	b, ok := resp.Body.(*body)
	if !ok {
		b = &body{ReadCloser: resp.Body}
		resp.Body = b
	}
	t.watch(b, h, limit)
}

// watch arms b's stall timeout, limit, for a body from host h: from now on
// a read that waits limit for a byte fails with a *StallError, and the
// contexts the stages held for the body end, so that the read blocked in
// the base transport returns. The watch is an entry on the transport's
// schedule, whose one runtime timer serves every body, as a timeout
// stage's serves every call.
func (t *Transport) watch(b *body, h Host, limit time.Duration) {
	b.sched, b.host, b.limit, b.elapsed = t.stalls, h, limit, &t.elapsed
	b.last.Store(int64(t.elapsed.Read()))
	b.mu.Lock() // Due may run before Add returns
	defer b.mu.Unlock()
	b.watched = true
	now := b.sched.Now()
	b.sched.Add(&b.at, b, now, now.Add(limit))
}

// stopWatch stops b's stall watch: the body is closed or read to its end.
func (b *body) stopWatch() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.watched {
		b.sched.Remove(&b.at)
		b.watched = false
	}
}

// Due runs when b may have stalled: if no byte came for the stall timeout,
// it ends what the stages held, which ends the read that waits; otherwise
// it looks again when the timeout would pass.
func (b *body) Due() {
	b.mu.Lock()
	if !b.watched {
		b.mu.Unlock()
		return
	}
	idle := time.Duration(int64(b.elapsed.Read()) - b.last.Load())
	if idle < b.limit {
		now := b.sched.Now()
		b.sched.Add(&b.at, b, now, now.Add(b.limit-idle))
		b.mu.Unlock()
		return
	}
	b.watched = false
	b.stalled.Store(true)
	b.mu.Unlock()
	b.end()
}
