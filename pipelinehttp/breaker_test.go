package pipelinehttp_test

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/pipelinehttp"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// TestBreakerOpensOnABurstOf503s sends GETs to a host that answers 503 until
// told otherwise. The breaker opens on the fifth failure in a row, during the
// second call, which is then refused with an error rather than a response;
// so is the next call, without reaching the server. Once the break is over, a
// probe goes through and the host answers again. The breaker's transition
// reaches the transport's OnEvent once.
func TestBreakerOpensOnABurstOf503s(t *testing.T) {
	srv := newFaultServer(t, serverOpts{}, func(call string, _ int) fault {
		if n, _ := strconv.Atoi(call); n >= 4 {
			return okReply
		}
		return unavailableReply
	})
	h := newHarness(t, newBase(t, srv, 0), pipelinehttp.Config{Standard: quick()})

	// Call 1: three 503s, the last one returned.
	resp, waits, err := h.do(t, newRequest(t, http.MethodGet, srv.URL, "1", ""))
	require.NoError(t, err)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	requireWhole(t, resp, errorSize)
	assert.Equal(t, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, waits)

	// Call 2: two more 503s make five in a row; the breaker opens and refuses
	// the third attempt. The refusal is an error, wrapped by the client.
	resp, waits, err = h.do(t, newRequest(t, http.MethodGet, srv.URL, "2", ""))
	require.Error(t, err)
	assert.Nil(t, resp)
	assert.Len(t, srv.seen("2"), 2)
	assert.Equal(t, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, waits)
	_, isURLError := errors.AsType[*url.Error](err)
	assert.True(t, isURLError, "http.Client wraps the transport's error in a *url.Error: %v", err)
	assert.ErrorIs(t, err, pipeline.DependencyUnavailable)
	stop, ok := errors.AsType[*pipeline.StopError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, "breaker", stop.Stage)
	assert.Equal(t, pipeline.DependencyUnavailable, stop.Reason)
	assert.Equal(t, 2, stop.Attempts)
	assert.Positive(t, stop.RetryAfter)
	value, ok := errors.AsType[*pipeline.ValueError](err)
	require.True(t, ok, "the last attempt's 503 is described in the error: %v", err)
	assert.Equal(t, "503 Service Unavailable", value.Value)

	host := hostOf(t, srv)
	snap := breakerOf(t, h.tr, host)
	assert.Equal(t, breaker.Open, snap.State)
	assert.Equal(t, []pipeline.Source{{Stage: "breaker", Name: host.String()}}, h.transitionSources(),
		"the transition reached Config.OnEvent once, from the host's breaker")

	// Call 3: refused at once; the server sees nothing.
	resp, waits, err = h.do(t, newRequest(t, http.MethodGet, srv.URL, "3", ""))
	assert.Nil(t, resp)
	assert.Empty(t, waits)
	assert.ErrorIs(t, err, pipeline.DependencyUnavailable)
	assert.Empty(t, srv.seen("3"))
	assert.Equal(t, 5, srv.total())

	// After the break, a probe reaches the host, which has recovered.
	h.clock.Advance(snap.BreakEnds.Sub(h.clock.Now()))
	resp, _, err = h.do(t, newRequest(t, http.MethodGet, srv.URL, "4", ""))
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	requireWhole(t, resp, errorSize)
	assert.NotEqual(t, breaker.Open, breakerOf(t, h.tr, host).State)
}

// hostOf is the Host of srv.
func hostOf(t testing.TB, srv *faultServer) pipelinehttp.Host {
	t.Helper()
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	return pipelinehttp.HostOf(u)
}

// breakerOf returns the snapshot of host's breaker, as a health endpoint
// reads it.
func breakerOf(t testing.TB, tr *pipelinehttp.Transport, host pipelinehttp.Host) breaker.Snapshot {
	t.Helper()
	for h, snap := range tr.Breakers {
		if h == host {
			return snap
		}
	}
	t.Fatalf("no breaker for %v", host)
	return breaker.Snapshot{}
}
