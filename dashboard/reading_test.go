package dashboard_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/dashboard"
	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/standard"
)

// TestReadingChangesNothing reads the page, the live part and the JSON
// many times, on virtual time, with the sampler running: an open breaker
// whose break has elapsed still reads half-open without giving away its
// probe, its budget keeps its balance, and an idle key is still evicted.
func TestReadingChangesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := standard.NewScopes(standard.ScopesConfig[string, string]{
			Config: standard.Config{
				Retry:      retry.Config{MaxAttempts: 2, Backoff: retry.Constant{Interval: 100 * time.Millisecond, Jitter: retry.NoJitter}},
				NoRecovery: true,
				Breaker:    breaker.Config{ConsecutiveFailures: 2, BreakDuration: time.Second, BreakJitter: breaker.JitterNone},
			},
			IdleAfter: time.Minute,
		})
		require.NoError(t, err)
		ctx := context.Background()
		_, err = s.Execute(ctx, "down", func(context.Context) (string, error) { return "", errDown })
		require.Error(t, err) // two failed attempts: open, for a second
		_, err = s.Execute(ctx, "idle", func(context.Context) (string, error) { return "ok", nil })
		require.NoError(t, err)
		d := newDashboard(t, dashboard.Config{Registry: registry(health.Scopes(s))})

		down, err := s.Get("down")
		require.NoError(t, err)
		time.Sleep(2 * time.Second) // past the break, two samples
		synctest.Wait()
		before, tokens := down.Breaker.Snapshot(), down.Budget.Tokens()
		for range 20 {
			for _, path := range []string{"/", "/live", "/state.json"} {
				require.Equal(t, 200, get(d, path).Code)
			}
		}
		assert.Equal(t, before, down.Breaker.Snapshot(), "reading changed the breaker")
		assert.Equal(t, tokens, down.Budget.Tokens(), "reading changed the budget")
		assert.Equal(t, breaker.HalfOpen, before.State, "it reads half-open")
		_, err = s.Execute(ctx, "down", func(context.Context) (string, error) { return "ok", nil })
		assert.NoError(t, err, "the probe slot was still there for a call")

		keys := func() map[string]bool {
			seen := map[string]bool{}
			for _, dep := range readState(t, d).Dependencies {
				seen[dep.Name] = true
			}
			return seen
		}
		require.True(t, keys()["idle"])
		// The idle key is read at every sample, and every page read, and
		// is evicted all the same once it has been idle long enough, at the
		// insertions of new keys.
		for _, fresh := range []string{"b", "c", "e"} {
			time.Sleep(2 * time.Minute)
			for range 5 {
				get(d, "/state.json")
			}
			_, err := s.Get(fresh)
			require.NoError(t, err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		assert.False(t, keys()["idle"], "the idle key was evicted: reading it was not a use")
	})
}
