package downstream_test

// The transport of package pipelinehttp, used as a user would: put in an
// http.Client in one line, over a real transport whose every response is
// counted, against the scripted loopback server of the other tests.

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/pipelinehttp"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/standard"
)

// requestsOf is the number of requests the server saw for call.
func (s *server) requestsOf(call int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[call]
}

// newRequest returns a request of call number call, tagged for the server's
// script.
func newRequest(t testing.TB, method, url string, call int, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set(callHeader, strconv.Itoa(call))
	return req
}

// quickRetries keeps the waits between attempts to a millisecond.
var quickRetries = standard.Config{Retry: retry.Config{Backoff: retry.Constant{Interval: time.Millisecond}}}

// TestHTTPTransportOneLine adopts the transport in one line and makes ten
// calls for a 1 MiB body, with 503s, fast and slow, that a retry replaces,
// and slow replies. (So many failures keep the hedge off: it only hedges a
// host whose breaker is calm; TestHTTPHedgeClosesTheLoser hedges.) Every body
// reads whole after RoundTrip has returned;
// every response the transport produced was closed exactly once, by the
// pipeline if it discarded it, by the test otherwise; and no connection or
// goroutine is left afterwards.
func TestHTTPTransportOneLine(t *testing.T) {
	goroutines := runtime.NumGoroutine()
	body := newPayload(1 << 20)
	srv := newServer(t, body, mixed)
	counting, tr := newClient(t)

	client := &http.Client{Transport: pipelinehttp.NewTransport(counting.Transport)} // the one line

	for call := range 10 {
		resp, err := client.Do(newRequest(t, http.MethodGet, srv.URL, call, ""))
		require.NoError(t, err, "call %d", call)
		requireComplete(t, resp, body, call)
		switch mixed(call) {
		case unavailable, raced:
			rs := tr.produced(call)
			if assert.Len(t, rs, 2, "call %d", call) {
				assert.Equal(t, http.StatusServiceUnavailable, rs[0].status, "call %d", call)
			}
		}
	}
	assertAllClosed(t, tr, srv, new(eventLog), goroutines)
}

// TestHTTPReplaySafety sends POSTs to a host that answers each call's first
// request with a 503: without an idempotency key the POST is sent once and
// its 503 returned; with one it is retried. A POST whose first connection
// cannot be made is sent again, since it never left.
func TestHTTPReplaySafety(t *testing.T) {
	goroutines := runtime.NumGoroutine()
	srv := newServer(t, newPayload(1<<10), func(int) reply { return unavailable })
	counting, tr := newClient(t)
	var events eventLog
	cfg := quickRetries
	transport, err := pipelinehttp.New(pipelinehttp.Config{Base: counting.Transport, Standard: cfg, OnEvent: events.record})
	require.NoError(t, err)
	client := &http.Client{Transport: transport}

	resp, err := client.Do(newRequest(t, http.MethodPost, srv.URL, 1, "order"))
	require.NoError(t, err)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, 1, srv.requestsOf(1), "a POST without a key was sent again")

	req := newRequest(t, http.MethodPost, srv.URL, 2, "order")
	req.Header.Set("Idempotency-Key", "order-2")
	resp, err = client.Do(req)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, resp.Body.Close())
	assert.Equal(t, 2, srv.requestsOf(2), "a POST with a key was not retried")

	// The first dial goes to a port nobody listens on: refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := l.Addr().String()
	require.NoError(t, l.Close())
	var dials atomic.Int32
	base := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(base.CloseIdleConnections)
	var d net.Dialer
	base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) == 1 {
			return d.DialContext(ctx, network, dead)
		}
		return d.DialContext(ctx, network, addr)
	}
	dialing, err := pipelinehttp.New(pipelinehttp.Config{Base: base, Standard: cfg})
	require.NoError(t, err)
	resp, err = (&http.Client{Transport: dialing}).Do(newRequest(t, http.MethodPost, srv.URL, 3, "order"))
	require.NoError(t, err)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "sent once it could be: its 503 is returned")
	require.NoError(t, resp.Body.Close())
	assert.EqualValues(t, 2, dials.Load())
	assert.Equal(t, 1, srv.requestsOf(3))

	assertAllClosed(t, tr, srv, &events, goroutines)
}

// TestHTTPHedgeClosesTheLoser warms the host's latency up, then sends a GET
// the server answers slowly: a hedge on a second connection wins, and the
// first copy is canceled and its connection closed, so none is left busy.
func TestHTTPHedgeClosesTheLoser(t *testing.T) {
	goroutines := runtime.NumGoroutine()
	body := newPayload(1 << 20)
	srv := newServer(t, body, func(call int) reply {
		if call == 100 {
			return slow
		}
		return prompt
	})
	counting, tr := newClient(t)
	var events eventLog
	transport, err := pipelinehttp.New(pipelinehttp.Config{Base: counting.Transport, OnEvent: events.record})
	require.NoError(t, err)
	client := &http.Client{Transport: transport}
	for call := range 20 { // the hedge's default MinSamples
		resp, err := client.Do(newRequest(t, http.MethodGet, srv.URL, call, ""))
		require.NoError(t, err)
		requireComplete(t, resp, body, call)
	}
	before := srv.accepted()

	resp, err := client.Do(newRequest(t, http.MethodGet, srv.URL, 100, ""))
	require.NoError(t, err)
	requireComplete(t, resp, body, 100)
	assert.Equal(t, 1, events.count(hedge.Hedged{}.Name()))
	assert.Equal(t, 2, srv.requestsOf(100))
	assert.Equal(t, before+1, srv.accepted(), "the hedge went out on a connection of its own")
	assertAllClosed(t, tr, srv, &events, goroutines)
}

// TestHTTPRefusalIsAnError opens a host's breaker by hand: the client gets an
// error, wrapped in a *url.Error, that matches pipeline.DependencyUnavailable
// and holds the breaker's StopError; the server sees nothing.
func TestHTTPRefusalIsAnError(t *testing.T) {
	srv := newServer(t, newPayload(1<<10), func(int) reply { return prompt })
	counting, _ := newClient(t)
	transport := pipelinehttp.NewTransport(counting.Transport)
	client := &http.Client{Transport: transport}
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	p, err := transport.Pipeline(pipelinehttp.HostOf(u))
	require.NoError(t, err)
	p.Breaker.Isolate()

	resp, err := client.Do(newRequest(t, http.MethodGet, srv.URL, 1, ""))
	assert.Nil(t, resp)
	require.Error(t, err)
	_, ok := errors.AsType[*url.Error](err)
	assert.True(t, ok)
	assert.ErrorIs(t, err, pipeline.DependencyUnavailable)
	stop, ok := errors.AsType[*pipeline.StopError](err)
	require.True(t, ok)
	assert.Equal(t, "breaker", stop.Stage)
	assert.Equal(t, srv.URL, stop.Name, "the stop names the host")
	assert.Zero(t, srv.requestsOf(1))
}
