package pipelinehttp_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/pipelinehttp"
)

// failDials makes base's first n dials fail as a dial to a port nobody
// listens on does: connection refused, before any byte of a request is sent.
func failDials(t testing.TB, base *http.Transport, n int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := l.Addr().String()
	require.NoError(t, l.Close())
	var dials atomic.Int32
	var d net.Dialer
	base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if int(dials.Add(1)) <= n {
			return d.DialContext(ctx, network, dead)
		}
		return d.DialContext(ctx, network, addr)
	}
}

// onceBody is a request body without GetBody, which records its Close.
type onceBody struct {
	io.Reader
	closed atomic.Bool
}

func (b *onceBody) Close() error {
	b.closed.Store(true)
	return nil
}

// TestReplaySafety checks what is sent again, and when, by method, headers,
// the request's own mark and the kind of body: a request that is not
// replayable is sent once on a 503 or a broken connection (and its failure
// still counts against the breaker), and again only after a dial error; one
// whose body cannot be rewound is never sent again.
func TestReplaySafety(t *testing.T) {
	const payload = "the request body, sent whole every time"
	cases := []struct {
		name     string
		method   string
		header   string // set to "key-1" if not empty
		mark     func(context.Context) context.Context
		once     bool // the body has no GetBody
		dials    int  // dials that fail before the server is reached
		script   func(n int) fault
		requests int
		waits    []time.Duration
		status   int   // 0: an error
		is       error // the error matches it
		failures int   // the breaker's run of failures afterwards
	}{
		{name: "POST without a key: a 503 is sent once", method: http.MethodPost,
			script: replies(unavailableReply), requests: 1, status: 503, failures: 1},
		{name: "POST without a key: a reset is sent once", method: http.MethodPost,
			script: replies(fault{reset: midHeader}, okReply), requests: 1, is: pipelinehttp.ErrNotResent, failures: 1},
		{name: "POST without a key: sent again after a dial error", method: http.MethodPost, dials: 1,
			script: replies(okReply), requests: 1, waits: []time.Duration{100 * time.Millisecond}, status: 200},
		{name: "POST without a key: dial errors to the last attempt", method: http.MethodPost, dials: 3,
			script: replies(okReply), requests: 0, waits: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond},
			is: syscall.ECONNREFUSED, failures: 3},
		{name: "POST with Idempotency-Key: retried", method: http.MethodPost, header: "Idempotency-Key",
			script: replies(unavailableReply, okReply), requests: 2, waits: []time.Duration{100 * time.Millisecond}, status: 200},
		{name: "POST with X-Idempotency-Key: retried", method: http.MethodPost, header: "X-Idempotency-Key",
			script: replies(unavailableReply, okReply), requests: 2, waits: []time.Duration{100 * time.Millisecond}, status: 200},
		{name: "POST marked Replayable: retried", method: http.MethodPost, mark: pipelinehttp.Replayable,
			script: replies(unavailableReply, okReply), requests: 2, waits: []time.Duration{100 * time.Millisecond}, status: 200},
		{name: "GET marked SendOnce: sent once", method: http.MethodGet, mark: pipelinehttp.SendOnce,
			script: replies(unavailableReply, okReply), requests: 1, status: 503, failures: 1},
		{name: "PUT with a key, body without GetBody: sent once", method: http.MethodPut, header: "Idempotency-Key", once: true,
			script: replies(unavailableReply, okReply), requests: 1, status: 503, failures: 1},
		{name: "POST whose body has no GetBody: not sent again after a dial error", method: http.MethodPost, once: true, dials: 1,
			script: replies(okReply), requests: 0, is: pipelinehttp.ErrNotResent, failures: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newFaultServer(t, serverOpts{}, script1(c.script))
			base := newBase(t, srv, 0)
			failDials(t, base, c.dials)
			h := newHarness(t, base, pipelinehttp.Config{Standard: quick()})

			req := newRequest(t, c.method, srv.URL, "1", payload)
			body := &onceBody{Reader: strings.NewReader(payload)}
			if c.once {
				req.Body, req.GetBody = body, nil
			}
			if c.header != "" {
				req.Header.Set(c.header, "key-1")
			}
			if c.mark != nil {
				req = req.WithContext(c.mark(req.Context()))
			}
			resp, waits, err := h.do(t, req)
			if c.status != 0 {
				require.NoError(t, err)
				assert.Equal(t, c.status, resp.StatusCode)
				requireWhole(t, resp, errorSize)
			} else {
				require.Error(t, err)
				assert.Nil(t, resp)
				assert.ErrorIs(t, err, c.is)
			}
			assert.Equal(t, c.waits, waits, "waits")
			seen := srv.seen("1")
			assert.Len(t, seen, c.requests, "requests")
			for i, b := range seen {
				assert.Equal(t, payload, b, "request %d's body", i+1)
			}
			if c.once {
				assert.True(t, body.closed.Load(), "the request's body was not closed")
			}
			p, err := h.tr.Pipeline(hostOf(t, srv))
			require.NoError(t, err)
			assert.Equal(t, c.failures, p.Breaker.Snapshot().ConsecutiveFailures, "breaker failures")
		})
	}
}

// TestNotResentError shows what a caller reads when a request that is not
// replayable broke on its way back: the attempt's own error, with the reason
// it was not sent again, and no stage that gave up on a retry it never made.
func TestNotResentError(t *testing.T) {
	srv := newFaultServer(t, serverOpts{}, script1(replies(fault{reset: midHeader})))
	h := newHarness(t, newBase(t, srv, 0), pipelinehttp.Config{Standard: quick()})
	_, _, err := h.do(t, newRequest(t, http.MethodPost, srv.URL, "1", "body"))
	require.Error(t, err)
	assert.ErrorIs(t, err, pipelinehttp.ErrNotResent)
	assert.ErrorIs(t, err, pipeline.Permanent)
	assert.Contains(t, err.Error(), "pipelinehttp: not sent again (the request is not replayable and may have reached the server): ")
	stop, ok := errors.AsType[*pipeline.StopError](err)
	require.True(t, ok)
	assert.Equal(t, 1, stop.Attempts)
}
