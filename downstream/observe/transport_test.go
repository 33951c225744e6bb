package observe_test

import (
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/pipelinehttp"
	"github.com/resilience-go/pipeline/standard"
)

// An HTTP transport given a Telemetry as its Observer reports every host it
// calls: the calls under the family "http", the host's breaker and budget
// under the host's name (its origin, "http://127.0.0.1:PORT"); its OnEvent
// logs the host's breaker transitions; its Health lists the host.
func TestTransportReportsEveryHostThroughOneField(t *testing.T) {
	m := newMeter(t)
	logs, logger := newLogs()
	srv := newFlaky(t)
	tr, err := pipelinehttp.New(pipelinehttp.Config{
		Standard: standard.Config{Retry: fastRetries},
		Observer: m.tel,
		OnEvent:  pipeline.LogEvents(logger),
	})
	require.NoError(t, err)
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	v := views{meter: m, logs: logs, health: serveHealth(t, tr.Health()), name: pipelinehttp.HostOf(u).String(), family: "http"}

	// A healthy host.
	const healthy = 5
	for range healthy {
		resp, err := client.Get(srv.URL)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, "fine", string(body))
	}
	v.expectClosed(t, healthy)

	// A storm: every request fails, until the host's breaker opens and
	// refuses the rest at once.
	srv.fail()
	var refused uint64
	for range storm {
		resp, err := client.Get(srv.URL)
		if err != nil {
			require.ErrorIs(t, err, pipeline.DependencyUnavailable)
			refused++
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	}
	require.Positive(t, refused, "the breaker refused none of %d calls", storm)
	v.expectOpen(t, healthy+storm, refused)
}
