package shed_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/policy/bulkhead"
	"github.com/resilience-go/pipeline/shed"
)

// A server whose bulkhead keeps a quarter of its slots for Sheddable
// requests, over real loopback connections: a flood of Critical requests
// fills it while no Sheddable one comes, and once one has been turned away,
// the next slot a Critical request frees goes to a Sheddable request, not
// to the flood.
func TestAGuaranteeServesSheddableRequestsThroughAFlood(t *testing.T) {
	b, err := bulkhead.New(bulkhead.Config{MaxConcurrent: 4, Guarantees: criticality.Guarantees{Sheddable: 0.25},
		Clock: clockwork.NewFakeClock()}) // the slot stays kept for as long as the test takes
	require.NoError(t, err)
	hold := make(chan struct{})
	h, err := shed.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			<-hold // one request goes for each send
		}
	}), shed.Config{Limits: []pipeline.Described{b}})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := srv.Client()
	defer client.CloseIdleConnections()

	get := func(path, level string) int {
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		req.Header = claims(level, "")
		resp, err := client.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { assert.Equal(t, http.StatusOK, get("/hold", "critical")) })
	}
	require.Eventually(t, func() bool { return b.InFlight() == 4 }, 10*time.Second, time.Millisecond, "the flood borrows the kept slot")
	assert.Equal(t, http.StatusServiceUnavailable, get("/", "sheddable"), "every slot is taken")

	hold <- struct{}{} // one Critical request ends
	require.Eventually(t, func() bool { return b.InFlight() == 3 }, 10*time.Second, time.Millisecond)
	assert.Equal(t, http.StatusServiceUnavailable, get("/", "critical"), "the freed slot is kept for Sheddable requests")
	assert.Equal(t, http.StatusOK, get("/", "sheddable"))
	assert.Equal(t, http.StatusServiceUnavailable, get("/", "critical"), "Sheddable requests asked within the second: still kept")

	close(hold)
	wg.Wait()
	assert.Zero(t, b.InFlight())
}
