package pipelineotel_test

import (
	"net/http"
	"net/http/httptest"
	"runtime"
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

// A transport dropped is no longer observed: the observer holds it weakly
// (one built per configuration reload used to stay observed, and in memory,
// for as long as the Telemetry lived), while one still in use is.
func TestADroppedTransportIsNoLongerObserved(t *testing.T) {
	r := newRig(t)
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	get := func(tr *pipelinehttp.Transport, url string) {
		resp, err := (&http.Client{Transport: tr}).Get(url)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
	}
	kept, err := pipelinehttp.New(pipelinehttp.Config{Observer: r.tel})
	require.NoError(t, err)
	get(kept, srv.URL)
	func() {
		dropped, err := pipelinehttp.New(pipelinehttp.Config{Observer: r.tel})
		require.NoError(t, err)
		get(dropped, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1))
		dropped.CloseIdleConnections()
	}()
	states := func() []string {
		var names []string
		for _, line := range r.metrics(t) {
			if strings.HasPrefix(line, "resilience.breaker.state{") {
				names = append(names, line)
			}
		}
		return names
	}
	require.Len(t, states(), 2, "both transports' hosts, while both live")
	runtime.GC()
	runtime.GC()
	got := states()
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "breaker.name="+srv.URL)
	runtime.KeepAlive(kept)
}
