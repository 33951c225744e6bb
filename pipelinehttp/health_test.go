package pipelinehttp_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/pipelinehttp"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/standard"
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
			requireWhole(t, resp, errorSize) // and closed
		}
		if err != nil {
			require.ErrorIs(t, err, pipeline.DependencyUnavailable)
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

// TestOneLineOfSlogLogsTheTransition: pipeline.LogEvents as the transport's
// OnEvent is all it takes for a host's breaker transition to reach the log,
// with the host.
func TestOneLineOfSlogLogsTheTransition(t *testing.T) {
	down := newFaultServer(t, serverOpts{}, script1(replies(unavailableReply)))
	var log lockedBuffer
	logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	tr, err := pipelinehttp.New(pipelinehttp.Config{OnEvent: pipeline.LogEvents(logger),
		Standard: standard.Config{Retry: retry.Config{Backoff: retry.Exponential{Base: time.Millisecond, Jitter: retry.NoJitter}}}})
	require.NoError(t, err)
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	for i := 0; !strings.Contains(log.String(), "breaker.transition"); i++ {
		require.Less(t, i, 5, "no transition logged:\n%s", log.String())
		if resp, err := client.Get(down.URL); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
	}
	var line string
	for l := range strings.Lines(log.String()) {
		if strings.Contains(l, "breaker.transition") {
			line = l
		}
	}
	assert.Contains(t, line, "stage=breaker")
	assert.Contains(t, line, "name="+hostOf(t, down).String())
	assert.Contains(t, line, "open")
}

// lockedBuffer is a bytes.Buffer safe for a log handler on any goroutine.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
