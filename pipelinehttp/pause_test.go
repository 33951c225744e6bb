package pipelinehttp_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/internal/retryrule"
	"github.com/resilience-go/pipeline/pipelinehttp"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/standard"
)

// dead is a base transport to a dependency that refuses every connection,
// counting the attempts that reach it.
type dead struct{ calls *atomic.Int64 }

func (d dead) RoundTrip(*http.Request) (*http.Response, error) {
	d.calls.Add(1)
	return nil, errors.New("dial tcp 10.0.0.1:443: connect: connection refused")
}

// openTransport returns a client whose one host's breaker is open, with the
// retry's RefusalPause pause (0: the transport's default).
func openTransport(t testing.TB, base dead, pause time.Duration) *http.Client {
	t.Helper()
	tr, err := pipelinehttp.New(pipelinehttp.Config{Base: base, Standard: standard.Config{Retry: retry.Config{RefusalPause: pause}}})
	require.NoError(t, err)
	c := &http.Client{Transport: tr}
	for {
		_, err := c.Get("https://dead.test/")
		if errors.Is(err, pipeline.DependencyUnavailable) {
			return c
		}
	}
}

// TestARefusalReturnsAtOnceThroughTheIntegrations measures, on virtual time,
// what a call refused by an open breaker costs its caller: with the
// preset's RefusalPause a request handler waits 100 ms before it can answer
// (and a loop that calls again at once makes ten calls a second); with the
// transport's default, no pause, it returns at once (docs/http.md,
// "Refusals"). Calls the breaker lets through to probe the dependency are
// left out: they fail and are retried.
func TestARefusalReturnsAtOnceThroughTheIntegrations(t *testing.T) {
	for _, c := range []struct {
		name        string
		pause, took time.Duration
	}{
		{name: "the transport's default", pause: 0, took: 0},
		{name: "the preset's pause", pause: retryrule.DefaultRefusalPause, took: retryrule.DefaultRefusalPause},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := dead{calls: new(atomic.Int64)}
				client := openTransport(t, base, c.pause)
				refused, paused := 0, 0
				for range 100 {
					before, start := base.calls.Load(), time.Now()
					_, err := client.Get("https://dead.test/")
					require.ErrorIs(t, err, pipeline.DependencyUnavailable)
					if base.calls.Load() != before {
						continue // a probe, retried
					}
					refused++
					took := time.Since(start)
					if c.took == 0 {
						assert.Zero(t, took, "a refusal returns at once")
					} else {
						assert.LessOrEqual(t, took, c.took, "the pause, or the refusal's hint if shorter")
						if took == c.took {
							paused++
						}
					}
				}
				assert.Greater(t, refused, 80, "most calls are refused outright")
				if c.took > 0 {
					assert.Greater(t, paused, refused/2, "most refusals wait the whole pause")
				}
			})
		})
	}
}

// BenchmarkRefusedGet is a loop that calls a dead host again as soon as a
// call fails, without a pause: how fast it goes. The breaker's trickled
// probes (one a second) fail and are retried, and their backoff paces the
// loop, not the refusals in between, which return at once.
func BenchmarkRefusedGet(b *testing.B) {
	client := openTransport(b, dead{calls: new(atomic.Int64)}, 0)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://dead.test/", nil)
		_, _ = client.Do(req)
	}
}
