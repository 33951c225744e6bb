package pipelinehttp_test

// The client side of the tests: a transport on a fake clock, whose retry waits
// a driver advances as they come, and the checks every test shares.

import (
	"context"
	"crypto/sha256"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/pipelinehttp"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/standard"
)

// epoch is where every fake clock starts: a whole second, so that a
// Retry-After date, which has whole seconds, is an exact wait.
var epoch = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// harness is a client whose transport runs on a fake clock.
type harness struct {
	tr     *pipelinehttp.Transport
	client *http.Client
	clock  *clockwork.FakeClock
	waits  chan time.Duration // the delay of every retry scheduled, in order

	mu          sync.Mutex
	counts      map[string]int // events by name
	attempts    map[string]int // attempts by the name of their pipeline (the host)
	transitions []pipeline.Source
}

// quick is the standard configuration of most tests: waits without jitter
// (100 ms, then 200 ms after a Transient failure; 1 s after a Throttled one
// without a hint) and no pause after a refusal, a 2 s attempt timeout, ample
// for a 16 MiB body under the race detector.
func quick() standard.Config {
	return standard.Config{
		Timeout:        20 * time.Second,
		AttemptTimeout: 2 * time.Second,
		Retry:          retry.Config{Backoff: retry.Exponential{Jitter: retry.NoJitter}, RefusalPause: -1},
	}
}

// newHarness returns a client over base whose transport is configured by cfg,
// on a fake clock, with an event hook.
func newHarness(t testing.TB, base http.RoundTripper, cfg pipelinehttp.Config) *harness {
	t.Helper()
	h := &harness{clock: clockwork.NewFakeClockAt(epoch), waits: make(chan time.Duration, 64), counts: map[string]int{}, attempts: map[string]int{}}
	cfg.Base, cfg.Clock, cfg.OnEvent = base, h.clock, h.record
	if cfg.BodyStallTimeout == 0 {
		// No stall watch on returned bodies: its schedule keeps a timer on
		// the fake clock between bodies, which do's wait for "the retry's
		// timer" would take for the retry's, advancing the clock before the
		// retry has armed it (the call then hung until its real-time
		// deadline, once under CI load). The stall watch has tests of its own.
		cfg.BodyStallTimeout = -1
	}
	tr, err := pipelinehttp.New(cfg)
	require.NoError(t, err)
	h.tr, h.client = tr, &http.Client{Transport: tr}
	return h
}

func (h *harness) record(_ context.Context, src pipeline.Source, e pipeline.Event) {
	if s, ok := e.(retry.Scheduled); ok {
		h.waits <- s.Delay
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.counts[e.Name()]++
	switch e.(type) {
	case pipeline.AttemptFinished:
		h.attempts[src.Pipeline]++
	case breaker.Transition:
		h.transitions = append(h.transitions, src)
	}
}

// transitionSources returns the source of every breaker transition the
// transport's OnEvent received, in order.
func (h *harness) transitionSources() []pipeline.Source {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]pipeline.Source(nil), h.transitions...)
}

// count returns how many events named name the transport emitted.
func (h *harness) count(name string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.counts[name]
}

// hedges returns how many hedges were sent.
func (h *harness) hedges() int { return h.count(hedge.Hedged{}.Name()) }

// do sends req and returns what the client returned, with the delay of every
// retry it waited: it advances the fake clock through each as it is
// scheduled, so that no test waits for real.
func (h *harness) do(t testing.TB, req *http.Request) (*http.Response, []time.Duration, error) {
	t.Helper()
	type result struct {
		resp *http.Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := h.client.Do(req)
		done <- result{resp, err}
	}()
	var waits []time.Duration
	for {
		select {
		case r := <-done:
			return r.resp, waits, r.err
		case d := <-h.waits:
			waits = append(waits, d)
			ctx, cancel := context.WithTimeout(context.Background(), eventually)
			err := h.clock.BlockUntilContext(ctx, 1) // the retry's timer
			cancel()
			require.NoError(t, err, "the retry scheduled after %v did not wait", d)
			h.clock.Advance(d)
		}
	}
}

// newBase returns a fresh transport for srv (HTTP/2 over TLS if srv was
// started so), allowing at most maxConns connections at once if maxConns > 0.
// Its idle connections are closed when the test ends.
func newBase(t testing.TB, srv *faultServer, maxConns int) *http.Transport {
	t.Helper()
	base := http.DefaultTransport.(*http.Transport).Clone()
	if srv.TLS != nil {
		base = srv.Client().Transport.(*http.Transport).Clone()
	}
	base.MaxConnsPerHost = maxConns
	t.Cleanup(base.CloseIdleConnections)
	return base
}

// newRequest returns a request of call, with body if it is not empty (with a
// GetBody, as http.NewRequest gives a strings.Reader).
func newRequest(t testing.TB, method, url, call, body string) *http.Request {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	require.NoError(t, err)
	req.Header.Set(callHeader, call)
	return req
}

// readAll reads the rest of resp's body and closes it, returning how many
// bytes it read, their SHA-256 and the read's error.
func readAll(resp *http.Response) (int, [sha256.Size]byte, error) {
	defer resp.Body.Close()
	hash := sha256.New()
	n, err := io.Copy(hash, resp.Body)
	var s [sha256.Size]byte
	copy(s[:], hash.Sum(nil))
	return int(n), s, err
}

// requireWhole reads resp's body to its end and checks that it is the first
// size bytes of content.
func requireWhole(t testing.TB, resp *http.Response, size int) {
	t.Helper()
	n, s, err := readAll(resp)
	require.NoError(t, err, "reading the body after RoundTrip returned")
	require.Equal(t, size, n, "body length")
	require.Equal(t, sum(size), s, "body checksum")
}
