package observe_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/health"
	pipelineotel "github.com/resilience-go/pipeline/otel"
	"github.com/resilience-go/pipeline/standard"
)

// Per-key standard pipelines built with pipelineotel.NewScopes report every
// key: the calls under the family (pipelineotel.DefaultFamily, "scopes",
// when the config names none), the key's breaker and budget under the key's
// pipeline's name. As the integrations' OnEvent does, the scopes' event hook
// (Options.OnEvent) receives every key's breaker's events too: one hook logs
// the transition, once.
func TestScopesReportEveryKeyThroughOneCall(t *testing.T) {
	m := newMeter(t)
	logs, logger := newLogs()
	srv := newFlaky(t)
	scopes, err := pipelineotel.NewScopes(m.tel, standard.ScopesConfig[string, string]{
		Config:  standard.Config{Retry: fastRetries},
		Options: pipeline.Options[string]{OnEvent: pipeline.LogEvents(logger)},
	})
	require.NoError(t, err)
	const key = "inventory"
	v := views{meter: m, logs: logs, health: serveHealth(t, health.Scopes(scopes.Scopes)), name: key, family: "scopes"}
	fetch := func(ctx context.Context) (string, error) { return get(ctx, srv.Client(), srv.URL) }

	// A healthy key.
	const healthy = 5
	for range healthy {
		body, err := scopes.Execute(t.Context(), key, fetch)
		require.NoError(t, err)
		require.Equal(t, "fine", body)
	}
	v.expectClosed(t, healthy)

	// A storm: every call fails, until the key's breaker opens and refuses
	// the rest at once.
	srv.fail()
	var refused uint64
	for range storm {
		_, err := scopes.Execute(t.Context(), key, fetch)
		require.Error(t, err)
		if errors.Is(err, pipeline.DependencyUnavailable) {
			refused++
		}
	}
	require.Positive(t, refused, "the breaker refused none of %d calls", storm)
	v.expectOpen(t, healthy+storm, refused)
}

// get is a user's own call of a dependency: a GET of url whose body it
// returns, a status of 500 and above being an error (Transient, as every
// error the pipeline does not recognise).
func get(ctx context.Context, client *http.Client, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode >= http.StatusInternalServerError {
		return "", fmt.Errorf("inventory: %s", resp.Status)
	}
	return string(body), nil
}
