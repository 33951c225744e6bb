package dashboard_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/dashboard"
	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// state is what the tests read of state.json.
type state struct {
	Actions      bool `json:"actions"`
	Dependencies []struct {
		Name    string `json:"name"`
		N       int    `json:"n"`
		Breaker *struct {
			State    string  `json:"state"`
			Pressure float64 `json:"pressure"`
			Trips    int     `json:"trips"`
		} `json:"breaker"`
		Latency *struct {
			Median float64 `json:"median_seconds"`
			P99    float64 `json:"p99_seconds"`
		} `json:"latency"`
		Attempts    *float64 `json:"attempts_per_second"`
		Refusals    *float64 `json:"refusals_per_second"`
		Transitions []struct {
			From, To, Cause string
			At              time.Time
			Sampled         bool
		} `json:"transitions"`
	} `json:"dependencies"`
}

// readState reads state.json from d.
func readState(t *testing.T, d http.Handler) state {
	t.Helper()
	w := get(d, "/state.json")
	require.Equal(t, http.StatusOK, w.Code)
	require.Equal(t, "application/json", w.Header().Get("Content-Type"))
	var s state
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &s), w.Body.String())
	return s
}

// TestTheStateFollowsABreakerThatOpens runs calls through a preset whose
// events reach the dashboard's hook, on virtual time: its state.json shows
// the attempts per second while the dependency answers, then the breaker
// open, its transition with its cause, and its refusals per second.
func TestTheStateFollowsABreakerThatOpens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var reg health.Registry
		d := newDashboard(t, dashboard.Config{Registry: &reg})
		p := preset(t, "payments", d.Observe)
		reg.Add(health.Preset(p))

		start := time.Now()
		for range 10 { // 10 calls of 5 ms: 50 ms of the second
			require.NoError(t, call(p, nil))
		}
		time.Sleep(time.Until(start.Add(time.Second))) // the bubble's clock, to the next sample
		synctest.Wait()
		s := readState(t, d)
		require.Len(t, s.Dependencies, 1)
		dep := s.Dependencies[0]
		assert.Equal(t, "closed", dep.Breaker.State)
		require.NotNil(t, dep.Attempts)
		assert.InDelta(t, 10, *dep.Attempts, 0.5, "ten attempts in the sampler's second")
		assert.Equal(t, 0.0, *dep.Refusals)
		require.NotNil(t, dep.Latency)
		assert.InDelta(t, 0.005, dep.Latency.Median, 0.0001, "the estimator's median of 5 ms calls")
		assert.Empty(t, dep.Transitions)

		require.Error(t, call(p, errDown))
		require.Error(t, call(p, errDown)) // two failures in a row: open
		opened := time.Now()
		for range 3 {
			require.ErrorIs(t, call(p, nil), pipeline.DependencyUnavailable)
		}
		time.Sleep(time.Until(start.Add(2 * time.Second)))
		synctest.Wait()
		s = readState(t, d)
		dep = s.Dependencies[0]
		assert.Equal(t, "open", dep.Breaker.State)
		assert.Equal(t, 1, dep.Breaker.Trips)
		require.NotNil(t, dep.Refusals)
		assert.InDelta(t, 3, *dep.Refusals, 0.1, "three refusals in the second")
		require.Len(t, dep.Transitions, 1)
		tr := dep.Transitions[0]
		assert.Equal(t, []string{"closed", "open", "consecutive failures"}, []string{tr.From, tr.To, tr.Cause})
		assert.True(t, tr.At.Equal(opened), "when the breaker opened: %v, not %v", tr.At, opened)
		assert.False(t, tr.Sampled)

		page := get(d, "/").Body.String()
		assert.Contains(t, page, `data-state="open"`)
		assert.Contains(t, page, "closed → open (consecutive failures)")
		assert.Contains(t, page, "<polyline", "the sparklines")
	})
}

// TestTransitionsSeenBySampling: without the hook, the dashboard sees a
// breaker's change of state between two samples, and says so.
func TestTransitionsSeenBySampling(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		brk, err := breaker.New(breaker.Config{Name: "ledger"})
		require.NoError(t, err)
		d := newDashboard(t, dashboard.Config{Registry: registry(health.Of("ledger", brk, nil)), Interval: 5 * time.Second})
		brk.Isolate()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		s := readState(t, d)
		require.Len(t, s.Dependencies, 1)
		dep := s.Dependencies[0]
		assert.Nil(t, dep.Attempts, "no hook, no rate")
		require.Len(t, dep.Transitions, 1)
		tr := dep.Transitions[0]
		assert.Equal(t, []string{"closed", "isolated", ""}, []string{tr.From, tr.To, tr.Cause})
		assert.True(t, tr.Sampled)
		assert.True(t, tr.At.Equal(time.Now()), "at the sample")
		assert.Contains(t, get(d, "/").Body.String(), "closed → isolated (seen by sampling)")
	})
}

// TestDependenciesOfOneName are told apart by their number, and a
// dependency gone from the registry leaves the dashboard at the next
// sample.
func TestDependenciesOfOneName(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, err := breaker.New(breaker.Config{Name: "a"})
		require.NoError(t, err)
		b, err := breaker.New(breaker.Config{Name: "b"})
		require.NoError(t, err)
		b.Isolate()
		var reg health.Registry
		reg.Add(health.Of("twin", a, nil))
		remove := reg.Add(health.Of("twin", b, nil))
		d := newDashboard(t, dashboard.Config{Registry: &reg})
		s := readState(t, d)
		require.Len(t, s.Dependencies, 2)
		assert.Equal(t, []int{0, 1}, []int{s.Dependencies[0].N, s.Dependencies[1].N})
		assert.Equal(t, []string{"closed", "isolated"}, []string{s.Dependencies[0].Breaker.State, s.Dependencies[1].Breaker.State})
		remove()
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Len(t, readState(t, d).Dependencies, 1)
	})
}
