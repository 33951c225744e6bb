package pipelinehttp

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resilience-go/pipeline/internal/callctx"
	"github.com/resilience-go/pipeline/internal/clock"
)

// drainLimit is how much of a discarded response's body (a retried 503, a
// hedge's loser) the transport reads before closing it. An HTTP/1.1
// connection can carry the next request only once the body before it has
// been read to its end, so a short error page is read whole and its
// connection goes back to the pool; a longer body is not downloaded for
// nothing, and its connection is closed instead. net/http's Client reads up
// to 2 KiB of a redirect's body for the same reason; error pages are often a
// little longer (a proxy's HTML 503), hence 4 KiB.
const drainLimit = 4 << 10

// release frees a response the pipeline discards: it reads what is left of a
// short body, so that the connection can be reused, and closes it. A body
// whose declared length exceeds drainLimit is closed at once, as net/http's
// Client does with a redirect's body.
func release(resp *http.Response) {
	if resp.Body == nil {
		return
	}
	if resp.ContentLength <= drainLimit { // -1 (unknown) included
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit+1))
	}
	_ = resp.Body.Close()
}

// whenReleased arranges for done to run when resp's body is closed, by the
// caller or by release. The stages of a pipeline each hand over what they
// derived for the attempt (their contexts) this way, up to three per
// response; they share one wrapper.
func whenReleased(resp *http.Response, done func()) *http.Response {
	if b, ok := resp.Body.(*body); ok && b.n < len(b.done) && !b.ended.Load() {
		b.done[b.n] = done
		b.n++
		return resp
	}
	b := &body{ReadCloser: resp.Body}
	if resp.Body == nil {
		b.ReadCloser = http.NoBody
	}
	b.done[0], b.n = done, 1
	resp.Body = b
	return resp
}

// body is a response body whose Close also ends what the pipeline's stages
// held for the attempt that produced it: its contexts, so that the body can
// be read to its end after RoundTrip has returned, and is cut off only by a
// deadline.
//
// The stages add to done before the response is handed on, one after the
// other; Close may then run on any goroutine, more than once.
type body struct {
	io.ReadCloser
	done  [3]func()   // what the stages hold: the whole call's timeout, the hedge, the attempt's timeout
	n     int         // done[:n] are set
	ended atomic.Bool // done has run

	// The stall watch, set by watch before the body is returned, if the
	// request has a stall timeout; sched is nil otherwise.
	sched   *callctx.Schedule // the transport's: one runtime timer for every body
	at      callctx.Entry
	host    Host
	limit   time.Duration  // the stall timeout
	elapsed *clock.Elapsed // the transport's clock
	last    atomic.Int64   // the reading of elapsed at the latest progress
	stalled atomic.Bool
	mu      sync.Mutex // guards watched and at's place on sched
	watched bool       // the watch runs: not stalled, closed or read to its end
}

// Read reads from the body, noting progress for the stall watch; once the
// body has stalled every read fails with its *StallError.
func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.sched != nil {
		if b.stalled.Load() {
			return n, &StallError{Host: b.host, After: b.limit}
		}
		if n > 0 {
			b.last.Store(int64(b.elapsed.Read()))
		}
		if err != nil { // the end, or a failure: nothing more to watch
			b.stopWatch()
		}
	}
	return n, err
}

// Close closes the body and then runs, once, everything the stages held.
func (b *body) Close() error {
	if b.sched != nil {
		b.stopWatch()
	}
	err := b.ReadCloser.Close()
	b.end()
	return err
}

// end runs, once, everything the stages held.
func (b *body) end() {
	if b.ended.CompareAndSwap(false, true) {
		for _, f := range b.done[:b.n] {
			f()
		}
	}
}
