package pipelinehttp_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/pipelinehttp"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/standard"
)

// wasted measures, over loopback, the work a server does for callers that
// have given up: calls with a 300 ms timeout (attempts of 150 ms, retried)
// to a server whose work takes 80 ms, or 400 ms one time in five, and stops
// when the request's context ends. With proxied, the
// calls go through a reverse proxy that finishes what it forwarded when
// its client leaves (as a proxy set to ignore client aborts, or a queue,
// does), so that only a deadline in the request can end the server's
// work. It returns the server's work after each caller's deadline, summed,
// and the requests the server received.
func wasted(t *testing.T, propagate, proxied bool) (waste time.Duration, received int64) {
	var wasteNs, requests atomic.Int64
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(1, 2))
	srv := httptest.NewServer(pipelinehttp.ServerDeadline(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		gaveUp, _ := strconv.ParseInt(r.Header.Get("X-Test-Gives-Up"), 10, 64)
		mu.Lock()
		work := 80 * time.Millisecond
		if rng.IntN(5) == 0 {
			work = 400 * time.Millisecond
		}
		mu.Unlock()
		start := time.Now()
		working(r.Context(), work) // ends with the request's context
		if late := time.Since(time.Unix(0, max(gaveUp, start.UnixNano()))); late > 0 {
			wasteNs.Add(int64(late))
		}
	})))
	defer srv.Close()
	target := srv.URL
	if proxied {
		u, _ := url.Parse(srv.URL)
		rp := httputil.NewSingleHostReverseProxy(u)
		proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Neither the context nor the connection's closing (the
			// writer's CloseNotify, hidden here) tells the proxy.
			rp.ServeHTTP(struct{ http.ResponseWriter }{w}, r.WithContext(context.WithoutCancel(r.Context())))
		}))
		defer proxy.Close()
		target = proxy.URL
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	defer base.CloseIdleConnections()
	cfg := pipelinehttp.Config{Base: base, Standard: standard.Config{Timeout: 300 * time.Millisecond, AttemptTimeout: 150 * time.Millisecond,
		Retry: retry.Config{Backoff: retry.Exponential{Base: 50 * time.Millisecond, Jitter: retry.NoJitter}}}}
	if propagate {
		cfg.PropagateDeadline = everyHost
	}
	tr, err := pipelinehttp.New(cfg)
	require.NoError(t, err)
	client := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			for range 10 {
				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				d, _ := ctx.Deadline()
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
				req.Header.Set("X-Test-Gives-Up", strconv.FormatInt(d.UnixNano(), 10))
				if resp, err := client.Do(req); err == nil {
					_ = resp.Body.Close()
				}
				cancel()
			}
		})
	}
	wg.Wait()
	return time.Duration(wasteNs.Load()), requests.Load()
}

// TestDeadlinesSaveTheServerWork compares the server's work for callers that
// gave up, without and with PropagateDeadline, called directly and through
// a proxy that finishes what it forwarded (docs/http.md quotes it: go test
// -run TestDeadlinesSaveTheServerWork -v ./pipelinehttp). Called directly,
// a Go server ends a request's context as soon as its caller disconnects,
// so the deadline saves little there; through the proxy only the deadline
// ends the server's work. Either way attempts with less time left than
// the server's median are not sent.
func TestDeadlinesSaveTheServerWork(t *testing.T) {
	if testing.Short() {
		t.Skip("a loopback measurement of about 8 s")
	}
	for _, proxied := range []bool{false, true} {
		without, sentWithout := wasted(t, false, proxied)
		with, sentWith := wasted(t, true, proxied)
		t.Logf("proxied %v: server work after the caller gave up, 100 calls: %v over %d requests without propagation, %v over %d with it",
			proxied, without.Round(time.Millisecond), sentWithout, with.Round(time.Millisecond), sentWith)
		if proxied {
			assert.Less(t, with, without/2, "through the proxy, only the deadline ends the work")
		}
	}
}
