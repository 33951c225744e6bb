package pipelinehttp_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/pipelinehttp"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/standard"
)

// hammerFault is the script of call i of the hammer: one call in eight of each
// kind, all but the last two recovering on their next request.
func hammerFault(i int) (script func(n int) fault, method string, want string) {
	const size = 32 << 10
	ok := fault{size: size}
	switch i % 8 {
	case 1:
		return replies(unavailableReply, ok), http.MethodGet, "whole"
	case 2:
		return replies(fault{status: 429, retryAfter: "1"}, ok), http.MethodGet, "whole"
	case 3:
		return replies(stallReply, ok), http.MethodGet, "whole"
	case 4:
		return replies(fault{reset: midHeader}, ok), http.MethodGet, "whole"
	case 5:
		return replies(fault{size: size, reset: midBody}), http.MethodGet, "broken"
	case 6:
		return replies(notFoundReply), http.MethodGet, "404"
	case 7:
		return replies(unavailableReply, ok), http.MethodPost, "503"
	}
	return replies(ok), http.MethodGet, "whole"
}

// TestHammer sends 1,000 requests with mixed faults (503s, 429s, stalls,
// connections reset mid-header and mid-body, 404s, POSTs) from 32 goroutines
// through one transport on real time, and checks that each call gets what its
// fault should give it, that the transport closed every response it did not
// return exactly once, and that no connection and no goroutine is left once
// the calls are done.
func TestHammer(t *testing.T) {
	const workers, perWorker = 32, 1000 / 32
	goroutines := runtime.NumGoroutine()
	srv := newFaultServer(t, serverOpts{}, func(call string, n int) fault {
		i, _ := strconv.Atoi(call)
		script, _, _ := hammerFault(i)
		return script(n)
	})
	base := &countingTransport{base: newBase(t, srv, 0)}
	var hedges, retries atomic.Int32
	tr, err := pipelinehttp.New(pipelinehttp.Config{
		Base: base,
		OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			switch e.(type) {
			case hedge.Hedged:
				hedges.Add(1)
			case retry.Scheduled:
				retries.Add(1)
			}
		},
		Standard: standard.Config{
			Timeout:        10 * time.Second,
			AttemptTimeout: 2 * time.Second,
			// Waits of a few milliseconds, hints capped to them; a budget
			// that never runs dry, and a breaker that does not trip on a
			// run of failures: this test is about what stays behind.
			Retry:   retry.Config{Backoff: retry.Exponential{Base: time.Millisecond, ThrottledBase: time.Millisecond, Max: 5 * time.Millisecond}, RefusalPause: -1},
			Budget:  budget.Config{Capacity: 1e6},
			Breaker: breaker.Config{ConsecutiveFailures: math.MaxInt},
			Hedge:   hedge.Config{MinDelay: 20 * time.Millisecond},
		},
	})
	assert.NoError(t, err)
	client := &http.Client{Transport: tr}

	var got sync.Map // outcome -> *atomic.Int32
	note := func(s string) {
		n, _ := got.LoadOrStore(s, new(atomic.Int32))
		n.(*atomic.Int32).Add(1)
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for j := range perWorker {
				i := w*perWorker + j
				_, method, want := hammerFault(i)
				var body io.Reader
				if method == http.MethodPost {
					body = strings.NewReader("order")
				}
				req, _ := http.NewRequest(method, srv.URL, body)
				req.Header.Set(callHeader, strconv.Itoa(i))
				resp, err := client.Do(req)
				if err != nil {
					note("error: " + err.Error())
					continue
				}
				n, s, readErr := readAll(resp)
				switch want {
				case "whole":
					if assert.Equal(t, http.StatusOK, resp.StatusCode, "call %d", i) {
						assert.NoError(t, readErr, "call %d", i)
						assert.Equal(t, 32<<10, n, "call %d", i)
						assert.Equal(t, sum(32<<10), s, "call %d", i)
					}
				case "broken":
					assert.Equal(t, http.StatusOK, resp.StatusCode, "call %d", i)
					assert.Error(t, readErr, "call %d", i)
				case "404":
					assert.Equal(t, http.StatusNotFound, resp.StatusCode, "call %d", i)
				case "503":
					assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "call %d", i)
					assert.Len(t, srv.seen(strconv.Itoa(i)), 1, "call %d: a POST was sent again", i)
				}
				note(fmt.Sprintf("%s: %d", want, resp.StatusCode))
			}
		})
	}
	wg.Wait()

	got.Range(func(k, v any) bool {
		t.Logf("%4d × %s", v.(*atomic.Int32).Load(), k)
		return true
	})
	accepted, _ := srv.connections()
	t.Logf("%d requests on %d connections; %d responses; %d retries, %d hedges",
		srv.total(), accepted, base.produced(), retries.Load(), hedges.Load())
	base.requireClosedOnce(t)
	srv.waitClosed(t, client.CloseIdleConnections)
	srv.Close()
	assertNoLeakedGoroutines(t, goroutines)
}

// countingTransport counts the Close calls on the body of every response its
// base produces.
type countingTransport struct {
	base *http.Transport

	mu     sync.Mutex
	closes []*atomic.Int32
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	n := new(atomic.Int32)
	c.mu.Lock()
	c.closes = append(c.closes, n)
	c.mu.Unlock()
	resp.Body = &countingBody{ReadCloser: resp.Body, closes: n}
	return resp, nil
}

func (c *countingTransport) CloseIdleConnections() { c.base.CloseIdleConnections() }

func (c *countingTransport) produced() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.closes)
}

// requireClosedOnce checks that every response was closed exactly once.
func (c *countingTransport) requireClosedOnce(t testing.TB) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	bad := 0
	for _, n := range c.closes {
		if n.Load() != 1 {
			bad++
		}
	}
	assert.Zero(t, bad, "of %d responses, %d were not closed exactly once", len(c.closes), bad)
}

type countingBody struct {
	io.ReadCloser
	closes *atomic.Int32
}

func (b *countingBody) Close() error {
	b.closes.Add(1)
	return b.ReadCloser.Close()
}

// assertNoLeakedGoroutines waits until no more goroutines run than at the
// baseline, and otherwise logs their stacks.
func assertNoLeakedGoroutines(t *testing.T, baseline int) {
	t.Helper()
	if !assert.Eventually(t, func() bool { return runtime.NumGoroutine() <= baseline+1 }, eventually, 5*time.Millisecond,
		"goroutines leaked: %d at the start", baseline) {
		var stacks strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
		t.Log(stacks.String())
	}
}
