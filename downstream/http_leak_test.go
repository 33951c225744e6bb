package downstream_test

import (
	"math"
	"net/http"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline/pipelinehttp"
)

// TestHTTPThousandCallsLeaveNothing makes 1,000 calls from 32 goroutines
// through one transport: GETs that get a 503 first, slow replies, 503s that
// come late, POSTs that get a 503 (and are not sent again), and plain GETs.
// Each call gets the reply its script says; every response the base
// transport produced is closed exactly once; and once the calls are done no
// connection is left open and no goroutine is left running.
func TestHTTPThousandCallsLeaveNothing(t *testing.T) {
	const workers, perWorker = 32, 1000 / 32
	goroutines := runtime.NumGoroutine()
	body := newPayload(4 << 10)
	srv := newServer(t, body, func(call int) reply {
		switch call % 10 {
		case 1, 7:
			return unavailable
		case 3:
			return slow
		case 5:
			return raced
		}
		return prompt
	})
	counting, tr := newClient(t)
	// Three calls in ten fail first. A run of five failures in a row among
	// 32 goroutines comes soon, and would open the breaker for the rest of
	// the test: here it may only trip on the failure ratio, which a steady
	// three in ten does not reach. And the retries those calls need would
	// soon empty the default budget, which pays for about one in ten.
	cfg := quickRetries
	cfg.Breaker.ConsecutiveFailures = math.MaxInt
	cfg.Budget.Capacity = 1e6
	var events eventLog
	transport, err := pipelinehttp.New(pipelinehttp.Config{Base: counting.Transport, Standard: cfg, OnEvent: events.record})
	assert.NoError(t, err)
	client := &http.Client{Transport: transport}

	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				call := w*perWorker + i
				method := http.MethodGet
				if call%10 == 7 {
					method = http.MethodPost
				}
				resp, err := client.Do(newRequest(t, method, srv.URL, call, "payload"))
				if !assert.NoError(t, err, "call %d", call) {
					continue
				}
				if method == http.MethodPost {
					assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "call %d", call)
					assert.NoError(t, resp.Body.Close())
					assert.Equal(t, 1, srv.requestsOf(call), "call %d: a POST was sent again", call)
					continue
				}
				checkComplete(t, resp, body, call)
			}
		})
	}
	wg.Wait()
	assertAllClosed(t, tr, srv, &events, goroutines)
}
