package pipelinehttp_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/pipelinehttp"
)

// TestHealthListsEveryHostWithoutUsingIt: after a 503 storm the health view
// lists the host with its open breaker, its budget and what its estimator
// measured; reading it is not a use, so the host still goes idle and is
// evicted when a new host comes.
func TestHealthListsEveryHostWithoutUsingIt(t *testing.T) {
	down := newFaultServer(t, serverOpts{}, script1(replies(unavailableReply)))
	up := newFaultServer(t, serverOpts{}, script1(replies(okReply)))
	third := newFaultServer(t, serverOpts{}, script1(replies(okReply)))
	cfg := pipelinehttp.Config{Standard: quick(), IdleAfter: time.Minute}
	h := newHarness(t, http.DefaultTransport.(*http.Transport).Clone(), cfg)
	var deps health.Registry
	deps.Add(h.tr.Health())

	for i := 0; ; i++ {
		require.Less(t, i, 5, "the breaker never opened")
		resp, _, err := h.do(t, newRequest(t, http.MethodGet, down.URL, strconv.Itoa(i), ""))
		if resp != nil {
			requireWhole(t, resp, errorSize) // and closed: its stall watch waits on the fake clock
		}
		if err != nil {
			require.ErrorIs(t, err, pipeline.ErrDependencyUnavailable)
			break // refused: the breaker is open
		}
	}
	rep := deps.Report()
	require.Len(t, rep.Dependencies, 1)
	d := rep.Dependencies[0]
	assert.Equal(t, hostOf(t, down).String(), d.Name)
	require.NotNil(t, d.Breaker)
	assert.Equal(t, "open", d.Breaker.State)
	require.NotNil(t, d.Budget)
	assert.Less(t, d.Budget.Tokens, d.Budget.Capacity, "the retries were paid for")

	// The registry gives a host used since it was last seen a second chance
	// at the next insertion, and evicts it as idle at the one after if it
	// was not used again (see package registry): two new hosts, IdleAfter
	// apart, with reads of the health view in between.
	for i, srv := range []*faultServer{up, third} {
		h.clock.Advance(2 * time.Minute)
		deps.Report() // a read, not a use
		resp, _, err := h.do(t, newRequest(t, http.MethodGet, srv.URL, strconv.Itoa(i+2), ""))
		require.NoError(t, err)
		requireWhole(t, resp, errorSize)
	}
	rep = deps.Report()
	require.Len(t, rep.Dependencies, 1, "the idle hosts were evicted: reading them kept them no longer")
	d = rep.Dependencies[0]
	assert.Equal(t, hostOf(t, third).String(), d.Name)
	require.NotNil(t, d.Latency, "the estimator measured the call")
	assert.Equal(t, 1, d.Latency.Samples)
}
