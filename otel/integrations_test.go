package pipelineotel_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/pipelinehttp"
)

// One field puts a transport's hosts into the metrics: the calls, their
// attempts and stops under the family "http", and each host's breaker and
// budget under its own name.
func TestATransportIsObservedThroughOneField(t *testing.T) {
	r := newRig(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	tr, err := pipelinehttp.New(pipelinehttp.Config{Observer: r.tel})
	require.NoError(t, err)
	client := &http.Client{Transport: tr}
	for range 200 {
		resp, err := client.Get(srv.URL)
		if err == nil {
			resp.Body.Close()
		}
	}
	lines := strings.Join(r.metrics(t), "\n")
	t.Log(lines)
	assert.Contains(t, lines, "resilience.call.duration{outcome=")
	assert.Contains(t, lines, "breaker.state=open")
}
