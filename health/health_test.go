package health_test

import (
	"context"
	"encoding/json"
	"errors"
	"expvar"
	"iter"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/standard"
)

// scopes returns per-key scopes whose breakers trip on two failures in a
// row and measure their normals from two samples, so that a few calls on
// virtual time put each key in a known state.
func scopes(t *testing.T) *standard.Scopes[string, string] {
	t.Helper()
	s, err := standard.NewScopes(standard.ScopesConfig[string, string]{Config: standard.Config{
		Retry: retry.Config{MaxAttempts: 2, Backoff: retry.Constant{Interval: 100 * time.Millisecond, Jitter: retry.NoJitter}},
		Breaker: breaker.Config{
			ConsecutiveFailures: 2,
			BreakDuration:       time.Second,
			BreakJitter:         breaker.JitterNone,
			SlowCalls:           breaker.SlowCalls{MinimumSamples: 2},
		},
	}})
	require.NoError(t, err)
	return s
}

// latency is a dependency's answer after d on the bubble's clock.
func latency(ctx context.Context, d time.Duration, err error) (string, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return "ok", err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// TestHandlerReportsEveryKey serves the view of a Scopes with one key whose
// breaker is open and one whose breaker is closed and has measured its
// dependency, beside a preset registered on its own, and checks the JSON.
func TestHandlerReportsEveryKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := scopes(t)
		ctx := context.Background()
		for range 3 {
			_, err := s.Execute(ctx, "up", func(ctx context.Context) (string, error) { return latency(ctx, 5*time.Millisecond, nil) })
			require.NoError(t, err)
		}
		_, err := s.Execute(ctx, "down", func(ctx context.Context) (string, error) {
			return latency(ctx, 5*time.Millisecond, errors.New("boom"))
		})
		// Two failures in a row, 100 ms apart, open its breaker: its budget
		// paid one retry, and has refilled for 105 ms at 3 tokens a second.
		require.ErrorIs(t, err, pipeline.AttemptsExhausted)
		alone, err := standard.New[int](standard.Config{Name: "alone"})
		require.NoError(t, err)

		var deps health.Registry
		deps.Add(health.Scopes(s))
		remove := deps.Add(health.Preset(alone))
		w := httptest.NewRecorder()
		deps.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/debug/dependencies", nil))
		assert.Equal(t, http.StatusOK, w.Code)
		assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
		breakEnds := time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano) // it tripped just now
		assert.JSONEq(t, `{"dependencies": [
			{"name": "alone",
			 "breaker": {"state": "closed", "pressure": 0, "normal_latency_seconds": null, "normal_failure_rate": null, "trips": 0},
			 "budget": {"tokens": 30, "capacity": 30, "utilization": 0}},
			{"name": "down",
			 "breaker": {"state": "open", "pressure": 1, "normal_latency_seconds": null, "normal_failure_rate": null, "trips": 1, "break_ends": "`+breakEnds+`"},
			 "budget": {"tokens": 29.315, "capacity": 30, "utilization": 0.022833333333333334}},
			{"name": "up",
			 "breaker": {"state": "closed", "pressure": 0, "normal_latency_seconds": 0.005, "normal_failure_rate": null, "trips": 0},
			 "budget": {"tokens": 30, "capacity": 30, "utilization": 0},
			 "latency": {"median_seconds": 0.005, "p95_seconds": 0.005008068, "p99_seconds": 0.005008068, "samples": 3}}
		]}`, w.Body.String())

		remove()
		remove()
		rep := deps.Report()
		require.Len(t, rep.Dependencies, 2)
		assert.Equal(t, []string{"down", "up"}, []string{rep.Dependencies[0].Name, rep.Dependencies[1].Name})
	})
}

// TestExpvarPublishesTheReport checks that the expvar.Func writes the JSON
// the handler writes.
func TestExpvarPublishesTheReport(t *testing.T) {
	brk, err := breaker.New(breaker.Config{Name: "solo"})
	require.NoError(t, err)
	brk.Isolate()
	var deps health.Registry
	deps.Add(health.Of("solo", brk, nil))
	var v expvar.Var = deps.Func()
	var fromExpvar health.Report
	require.NoError(t, json.Unmarshal([]byte(v.String()), &fromExpvar))
	w := httptest.NewRecorder()
	deps.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	var fromHandler health.Report
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &fromHandler))
	assert.Equal(t, fromHandler, fromExpvar)
	require.Len(t, fromExpvar.Dependencies, 1)
	assert.Equal(t, "isolated", fromExpvar.Dependencies[0].Breaker.State)
	assert.Nil(t, fromExpvar.Dependencies[0].Budget, "a nil budget is unlimited, and not reported")
}

// TestHandlerMethods checks HEAD (headers, no body) and a refused POST, and
// an empty registry's report.
func TestHandlerMethods(t *testing.T) {
	var deps health.Registry
	w := httptest.NewRecorder()
	deps.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	assert.JSONEq(t, `{"dependencies": []}`, w.Body.String())
	w = httptest.NewRecorder()
	deps.ServeHTTP(w, httptest.NewRequest(http.MethodHead, "/", nil))
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Empty(t, w.Body.String())
	w = httptest.NewRecorder()
	deps.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/", nil))
	assert.Equal(t, http.StatusMethodNotAllowed, w.Code)
	assert.Equal(t, "GET, HEAD", w.Header().Get("Allow"))
}

// TestANilSourceIsRefusedWhereItIsAdded: Add(nil) used to be accepted and
// panic later, in Report (issue #27 item 11).
func TestANilSourceIsRefusedWhereItIsAdded(t *testing.T) {
	var r health.Registry
	const want = "health: Registry.Add: the source is nil: pass one from health.Of, Preset, Scopes or a type with a Dependencies method"
	assert.PanicsWithValue(t, want, func() { r.Add(nil) })
	var scopes *nilSource
	assert.PanicsWithValue(t, want, func() { r.Add(scopes) })
	assert.NotPanics(t, func() { _ = r.Report() })
}

// nilSource is a Source whose nil pointer would panic when read.
type nilSource struct{ deps []health.Dependency }

func (s *nilSource) Dependencies() iter.Seq[health.Dependency] { return slices.Values(s.deps) }
