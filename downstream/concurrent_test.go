package downstream_test

import (
	"context"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestManyGoroutinesShareOnePipeline runs 16 goroutines of 10 calls each
// through one pipeline, with 1 MiB bodies, some 503s and some slow replies: every
// body arrives whole, every response is closed exactly once, and no connection
// or goroutine is left afterwards.
func TestManyGoroutinesShareOnePipeline(t *testing.T) {
	const workers, perWorker = 16, 10
	goroutines := runtime.NumGoroutine()
	body := newPayload(1 << 20)
	// Call w*perWorker+i is worker w's i-th. The failures are spread so that at
	// any moment only about one worker in eight sees a 503: a burst of them
	// would trip the breaker, which is its job but not this test's subject.
	srv := newServer(t, body, func(call int) reply {
		switch (call/perWorker + call%perWorker) % 8 {
		case 0:
			return unavailable
		case 4:
			return slow
		}
		return prompt
	})
	client, tr := newClient(t)
	var events eventLog
	p := newPipeline(t, &events, nil)

	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				call := w*perWorker + i
				resp, err := p.Execute(context.Background(), get(client, srv.URL, call))
				if !assert.NoError(t, err, "call %d", call) {
					if resp != nil { // a stop error comes with the last response: close it too
						_ = resp.Body.Close()
					}
					continue
				}
				checkComplete(t, resp, body, call)
			}
		})
	}
	wg.Wait()

	assertAllClosed(t, tr, srv, &events, goroutines)
}
