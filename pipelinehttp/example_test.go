package pipelinehttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/resilience-go/pipeline/pipelinehttp"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/standard"
)

// The one line a client adds: every request now runs through its host's
// standard pipeline. A 404 is the server's answer, returned as a plain client
// returns it; the host's breaker is there for a health endpoint to read.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, "hello")
	}))
	defer srv.Close()

	transport := pipelinehttp.NewTransport(nil) // nil: http.DefaultTransport
	client := &http.Client{Transport: transport}
	defer client.CloseIdleConnections()

	for _, path := range []string{"/", "/missing"} {
		resp, err := client.Get(srv.URL + path)
		if err != nil {
			fmt.Println(err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%s: %s %q\n", path, resp.Status, strings.TrimSpace(string(body)))
	}
	for _, snap := range transport.Breakers {
		fmt.Println("breaker:", snap.State)
	}
	// Output:
	// /: 200 OK "hello"
	// /missing: 404 Not Found "404 page not found"
	// breaker: closed
}

// One host gets a configuration of its own: payments are tried once, where
// every other host keeps the standard three attempts. Both servers answer
// their first request with a 503.
func ExampleConfig_perHost() {
	newServer := func() (*httptest.Server, *atomic.Int32) {
		var requests atomic.Int32
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if requests.Add(1) == 1 {
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
			fmt.Fprint(w, "ok")
		})), &requests
	}
	catalog, catalogRequests := newServer()
	defer catalog.Close()
	payments, paymentsRequests := newServer()
	defer payments.Close()
	paymentsURL, _ := url.Parse(payments.URL)

	transport, err := pipelinehttp.New(pipelinehttp.Config{
		// Every host: a millisecond between attempts, to keep the example quick.
		Standard: standard.Config{Retry: retry.Config{Backoff: retry.Constant{Interval: time.Millisecond}}},
		PerHost: func(h pipelinehttp.Host, shared standard.Config) standard.Config {
			if h == pipelinehttp.HostOf(paymentsURL) {
				shared.Retry.MaxAttempts = 1
			}
			return shared
		},
	})
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: transport}
	defer client.CloseIdleConnections()

	for _, s := range []struct {
		name, url string
		requests  *atomic.Int32
	}{{"catalog", catalog.URL, catalogRequests}, {"payments", payments.URL, paymentsRequests}} {
		resp, err := client.Get(s.url)
		if err != nil {
			fmt.Println(err)
			continue
		}
		resp.Body.Close()
		fmt.Printf("%s: %s after %d request(s)\n", s.name, resp.Status, s.requests.Load())
	}
	// Output:
	// catalog: 200 OK after 2 request(s)
	// payments: 503 Service Unavailable after 1 request(s)
}

// A POST is not replayable, so it is sent once; a POST the server can
// deduplicate is marked with Replayable (or carries an Idempotency-Key), and
// is then retried like a GET. The server answers the first request of each
// POST with a 503.
func ExampleReplayable() {
	var requests atomic.Int32
	var busy atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if busy.Swap(false) {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "created")
	}))
	defer srv.Close()
	transport, err := pipelinehttp.New(pipelinehttp.Config{
		Standard: standard.Config{Retry: retry.Config{Backoff: retry.Constant{Interval: time.Millisecond}}},
	})
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: transport}
	defer client.CloseIdleConnections()

	post := func(req *http.Request) {
		before := requests.Load()
		busy.Store(true)
		resp, err := client.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		fmt.Printf("%s after %d request(s)\n", resp.Status, requests.Load()-before)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"item": 1}`))
	post(req)
	req, _ = http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"item": 1}`))
	post(req.WithContext(pipelinehttp.Replayable(req.Context())))
	// Output:
	// 503 Service Unavailable after 1 request(s)
	// 200 OK after 2 request(s)
}

// A report that takes far longer than the rest of its host's endpoints gets
// a route, and with it a breaker, budget and estimator of its own: its slow
// answers set its own normal latency, not the host's.
func ExampleRoute() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	transport := pipelinehttp.NewTransport(nil)
	client := &http.Client{Transport: transport}
	defer client.CloseIdleConnections()

	get := func(req *http.Request) {
		resp, err := client.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
	}
	items, _ := http.NewRequest(http.MethodGet, srv.URL+"/items", nil)
	get(items)
	report, _ := http.NewRequest(http.MethodGet, srv.URL+"/report", nil)
	get(report.WithContext(pipelinehttp.Route(report.Context(), "reports")))

	for host, snap := range transport.Breakers {
		fmt.Printf("route %q: breaker %s\n", host.Route, snap.State)
	}
	// Unordered output:
	// route "": breaker closed
	// route "reports": breaker closed
}
