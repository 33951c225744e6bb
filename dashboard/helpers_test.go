package dashboard_test

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/dashboard"
	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/standard"
)

// errDown is a failing dependency's error.
var errDown = errors.New("down")

// preset returns a standard pipeline named name whose breaker opens on two
// failures in a row for a second, with no retry (so that each call is one
// attempt) and no recovery ramp (a hedge stage, which sends no copy of a
// call not marked repeatable, feeds its latency estimator), its breaker's and its own events going to
// hook.
func preset(t *testing.T, name string, hook func(context.Context, pipeline.Source, pipeline.Event)) *standard.Pipeline[string] {
	t.Helper()
	p, err := standard.New[string](standard.Config{
		Name:       name,
		Retry:      retry.Config{MaxAttempts: 1},
		NoRecovery: true,
		Breaker: breaker.Config{
			ConsecutiveFailures: 2,
			BreakDuration:       time.Second,
			BreakJitter:         breaker.JitterNone,
			OnEvent:             hook,
		},
	})
	require.NoError(t, err)
	if hook != nil {
		p = p.With(pipeline.Options[string]{OnEvent: hook})
	}
	return p
}

// call runs one call of p that takes 5 ms and fails with err.
func call(p *standard.Pipeline[string], err error) error {
	_, got := p.Execute(context.Background(), func(ctx context.Context) (string, error) {
		t := time.NewTimer(5 * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
			return "ok", err
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	return got
}

// newDashboard builds a dashboard of cfg, closed when the test ends.
func newDashboard(t *testing.T, cfg dashboard.Config) *dashboard.Dashboard {
	t.Helper()
	d, err := dashboard.New(cfg)
	require.NoError(t, err)
	t.Cleanup(d.Close)
	return d
}

// get serves a GET of path by h, in process, and returns the response.
func get(h http.Handler, path string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
	return w
}

// post serves a POST of the form by h, in process.
func post(h http.Handler, path, form string, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// registry returns a registry of the sources.
func registry(sources ...health.Source) *health.Registry {
	var r health.Registry
	for _, s := range sources {
		r.Add(s)
	}
	return &r
}

// ownSource is a Source of the user's own: one dependency, named own, with
// a breaker's state but no breaker the dashboard could reach.
type ownSource struct{}

func (ownSource) Dependencies() iter.Seq[health.Dependency] {
	return slices.Values([]health.Dependency{{Name: "own", Breaker: &health.Breaker{State: "open", Pressure: 1}}})
}
