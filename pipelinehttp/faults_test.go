package pipelinehttp_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/pipelinehttp"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// TestFaults sends one GET per fault to a fresh server and transport, over
// HTTP/1.1 and HTTP/2, and checks everything the fault should lead to: the
// requests the server saw, the waits between them, the status returned or
// the error, whether the body reads whole after RoundTrip returned, the
// connections the server accepted and the breaker's run of failures.
//
// The transport may hold one connection at a time (MaxConnsPerHost 1), so
// that the count of connections is exact: a discarded response that was read
// and closed hands its connection to the next attempt; one that broke, or
// timed out, costs a new one. A discarded response left open would block the
// next attempt until its timeout.
func TestFaults(t *testing.T) {
	dateIn3s := epoch.Add(3 * time.Second).Format(http.TimeFormat)
	cases := []struct {
		name     string
		script   func(n int) fault
		attempt  time.Duration // the attempt timeout, if not quick's
		requests int
		waits    []time.Duration
		status   int // 0: an error
		size     int // the body that must read whole; -1: its read must fail
		conns    [2]int
		failures int // the breaker's run of failures afterwards
	}{
		{name: "16 MiB", script: replies(largeReply),
			requests: 1, status: 200, size: 16 << 20, conns: [2]int{1, 1}},
		{name: "503 burst, then 16 MiB", script: replies(unavailableReply, unavailableReply, largeReply),
			requests: 3, waits: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond},
			status: 200, size: 16 << 20, conns: [2]int{1, 1}},
		{name: "503 to the end", script: replies(unavailableReply),
			requests: 3, waits: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond},
			status: 503, size: errorSize, conns: [2]int{1, 1}, failures: 3},
		{name: "503 with Retry-After", script: replies(fault{status: 503, retryAfter: "1"}, okReply),
			requests: 2, waits: []time.Duration{time.Second}, status: 200, size: errorSize, conns: [2]int{1, 1}},
		{name: "429 with Retry-After in seconds", script: replies(fault{status: 429, retryAfter: "2"}, okReply),
			requests: 2, waits: []time.Duration{2 * time.Second}, status: 200, size: errorSize, conns: [2]int{1, 1}},
		{name: "429 with Retry-After as an HTTP-date", script: replies(fault{status: 429, retryAfter: dateIn3s}, okReply),
			requests: 2, waits: []time.Duration{3 * time.Second}, status: 200, size: errorSize, conns: [2]int{1, 1}},
		{name: "429 without Retry-After", script: replies(throttledReply, okReply),
			requests: 2, waits: []time.Duration{time.Second}, status: 200, size: errorSize, conns: [2]int{1, 1}},
		{name: "429 asking for more than the call has left", script: replies(fault{status: 429, retryAfter: "3600"}),
			requests: 1, status: 429, size: errorSize, conns: [2]int{1, 1}},
		{name: "slower than the attempt timeout", script: replies(stallReply, okReply), attempt: 2 * time.Second,
			requests: 2, waits: []time.Duration{100 * time.Millisecond}, status: 200, size: errorSize, conns: [2]int{2, 1}},
		{name: "reset mid-header", script: replies(fault{reset: midHeader}, okReply),
			requests: 2, waits: []time.Duration{100 * time.Millisecond}, status: 200, size: errorSize, conns: [2]int{2, 1}},
		{name: "reset mid-body", script: replies(fault{size: 16 << 20, reset: midBody}),
			requests: 1, status: 200, size: -1, conns: [2]int{1, 1}},
		{name: "404", script: replies(notFoundReply),
			requests: 1, status: 404, size: errorSize, conns: [2]int{1, 1}},
		{name: "501", script: replies(fault{status: 501}),
			requests: 1, status: 501, size: errorSize, conns: [2]int{1, 1}},
	}
	for i, proto := range []string{"HTTP/1.1", "HTTP/2"} {
		t.Run(proto, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					srv := newFaultServer(t, serverOpts{http2: i == 1}, script1(c.script))
					cfg := quick()
					if c.attempt > 0 {
						cfg.AttemptTimeout = c.attempt
					}
					h := newHarness(t, newBase(t, srv, 1), pipelinehttp.Config{Standard: cfg})

					resp, waits, err := h.do(t, newRequest(t, http.MethodGet, srv.URL, "1", ""))
					require.NoError(t, err)
					assert.Equal(t, c.status, resp.StatusCode)
					assert.Equal(t, i+1, resp.ProtoMajor)
					if c.size >= 0 {
						requireWhole(t, resp, c.size)
					} else {
						n, _, err := readAll(resp)
						assert.Error(t, err, "the body broke off, yet read to its end")
						assert.Less(t, n, 16<<20)
					}
					assert.Len(t, srv.seen("1"), c.requests, "requests")
					assert.Equal(t, c.waits, waits, "waits")
					accepted, _ := srv.connections()
					assert.Equal(t, c.conns[i], accepted, "connections")

					p, err := h.tr.Pipeline(pipelinehttp.HostOf(resp.Request.URL))
					require.NoError(t, err)
					snap := p.Breaker.Snapshot()
					assert.Equal(t, breaker.Closed, snap.State)
					assert.Equal(t, c.failures, snap.ConsecutiveFailures, "breaker failures")

					srv.waitClosed(t, h.tr.CloseIdleConnections)
				})
			}
		})
	}
}
