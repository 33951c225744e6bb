package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/resilience-go/pipeline/health"
)

// The service, run in-process with fake upstreams that answer well and
// then fail every request: the breakers open, / answers 503, and the
// metrics and the health view say so, in the names the exporter gives.
func TestAnOutageOpensTheBreakersAndShowsInMetricsAndHealth(t *testing.T) {
	s := outage(t)

	assert.Equal(t, http.StatusServiceUnavailable, s.lastCode, "once the breaker is open, / answers 503")

	calls := s.families["resilience_call_duration_seconds"]
	require.NotNil(t, calls, "the call-duration histogram")
	assert.Equal(t, dto.MetricType_HISTOGRAM, calls.GetType())
	assert.Contains(t, labelValues(calls, "resilience_pipeline_name"), "http")
	assert.Contains(t, labelValues(calls, "resilience_pipeline_name"), "grpc")
	assert.Contains(t, labelValues(calls, "resilience_outcome"), "dependency_unavailable")

	upstream := s.upstreamName(t)
	assert.Equal(t, 1.0, gauge(t, s.families["resilience_breaker_state"], map[string]string{
		"resilience_breaker_name":  upstream,
		"resilience_breaker_state": "open",
	}), "the upstream's breaker state series, open")

	transitions := s.families["resilience_breaker_transitions_total"]
	require.NotNil(t, transitions, "the transitions counter")
	assert.Equal(t, dto.MetricType_COUNTER, transitions.GetType())
	assert.Contains(t, labelValues(transitions, "resilience_breaker_state"), "open")

	tokens := s.families["resilience_budget_tokens"]
	require.NotNil(t, tokens, "the budget tokens gauge")
	assert.Contains(t, labelValues(tokens, "resilience_budget_name"), upstream)

	dep := s.dependency(t, upstream)
	require.NotNil(t, dep.Breaker)
	assert.Equal(t, "open", dep.Breaker.State)
	require.NotNil(t, dep.Budget)
	for _, d := range s.health.Dependencies { // the gRPC target too
		require.NotNil(t, d.Breaker, d.Name)
		assert.Equal(t, "open", d.Breaker.State, d.Name)
	}
}

// The service stops cleanly when its context ends: run returns nil, and no
// goroutine it started (servers, clients, fakes, its own load) is left.
func TestTheServiceStopsCleanlyWhenItsContextEnds(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	cfg := config{Addr: "127.0.0.1:0", Load: 20, Logger: testLogger(t)}
	go func() { done <- run(ctx, cfg, func(addr string) { addrs <- addr }) }()
	var addr string
	select {
	case addr = <-addrs:
	case err := <-done:
		t.Fatalf("run returned before it listened: %v", err)
	}

	client := newTestClient(t)
	for _, path := range []string{"/", "/metrics", "/health", "/"} {
		code, _ := get(t, client, "http://"+addr+path)
		assert.Contains(t, []int{http.StatusOK, http.StatusBadGateway, http.StatusServiceUnavailable}, code, path)
	}
	client.CloseIdleConnections()
	cancel()
	require.NoError(t, <-done)
}

// A service that cannot listen returns the listener's error, having
// stopped what it had started (its fakes, its meter provider).
func TestAServiceThatCannotListenStopsWhatItStarted(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()

	err = run(t.Context(), config{Addr: taken.Addr().String(), Logger: testLogger(t)}, func(string) {
		t.Error("ready was called, but the address is taken")
	})
	assert.ErrorContains(t, err, "address already in use")
}

// scrape is what a test saw of the service: the last status of /, the
// metrics parsed from /metrics, the report of /health.
type scrape struct {
	lastCode int
	text     string // the scrape, as served
	families map[string]*dto.MetricFamily
	health   health.Report
}

// outage runs the service with its fake upstreams through a short story,
// and scrapes it at the end. First the fakes answer well, one answer in
// 50 after a second: past the hedge's delay (the p95 of the answers, 10 ms
// at least), so that the slow answer is hedged, until a hedge has won on
// both upstreams. (On a busy machine some quick answers outlast 10 ms and
// are hedged too, spending the hedges the stage allows, MaxExtra, before a
// slow answer comes: then it takes a few more slow answers.) Then the fakes
// fail every request, and / is called until it answers 503, the
// upstream's breaker refusing: retries, trips and refusals. The number of
// requests is bounded in both parts.
func outage(t *testing.T) scrape {
	t.Helper()
	f := newFaults(0, 0.02, time.Second, 0, 0)
	base := startService(t, config{Faults: f})
	client := newTestClient(t)

	for n := 1; n <= 500; n++ {
		code, body := get(t, client, base+"/")
		require.Equal(t, http.StatusOK, code, body)
		if n >= 60 && n%10 == 0 && hedgesWon(scrapeMetrics(t, client, base).families) {
			break
		}
	}
	f.setFail(1)
	var s scrape
	for range 20 {
		if s.lastCode, _ = get(t, client, base+"/"); s.lastCode == http.StatusServiceUnavailable {
			break
		}
	}
	m := scrapeMetrics(t, client, base)
	s.text, s.families = m.text, m.families
	code, report := get(t, client, base+"/health")
	require.Equal(t, http.StatusOK, code)
	require.NoError(t, json.Unmarshal([]byte(report), &s.health))
	return s
}

// scrapeMetrics GETs /metrics and parses it.
func scrapeMetrics(t *testing.T, client *http.Client, base string) scrape {
	t.Helper()
	code, text := get(t, client, base+"/metrics")
	require.Equal(t, http.StatusOK, code)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	require.NoError(t, err)
	return scrape{text: text, families: families}
}

// hedgesWon reports whether a hedge has won on both families, http and
// grpc.
func hedgesWon(families map[string]*dto.MetricFamily) bool {
	won := labelValues(families["resilience_hedge_wins_total"], "resilience_pipeline_name")
	return slices.Contains(won, "http") && slices.Contains(won, "grpc")
}

// upstreamName is the name of the HTTP upstream in the health view and in
// the metrics' labels: its origin, "http://127.0.0.1:port".
func (s scrape) upstreamName(t *testing.T) string {
	t.Helper()
	for _, d := range s.health.Dependencies {
		if strings.HasPrefix(d.Name, "http://") {
			return d.Name
		}
	}
	t.Fatalf("no HTTP upstream in the health view: %+v", s.health)
	return ""
}

// dependency is the entry named name of the health view.
func (s scrape) dependency(t *testing.T, name string) health.Dependency {
	t.Helper()
	for _, d := range s.health.Dependencies {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("%s is not in the health view: %+v", name, s.health)
	return health.Dependency{}
}

// startService runs the service in-process on a free loopback port, with
// cfg's other settings, and returns its base URL. It stops when the test
// ends, which fails if it did not stop cleanly.
func startService(t *testing.T, cfg config) string {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, func(addr string) { addrs <- addr }) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done, "run's error once stopped")
	})
	select {
	case addr := <-addrs:
		return "http://" + addr
	case err := <-done:
		done <- err // for the cleanup
		t.Fatalf("run returned before it listened: %v", err)
		return ""
	}
}

// testLogger logs to the test's output, from Info up.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), nil))
}

// newTestClient is a client on a transport of its own, whose connections
// are closed when the test ends.
func newTestClient(t *testing.T) *http.Client {
	transport := &http.Transport{}
	t.Cleanup(transport.CloseIdleConnections)
	return &http.Client{Transport: transport, Timeout: time.Minute}
}

// get GETs url and returns the status and the body.
func get(t *testing.T, client *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := client.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// labelValues is every value the label name takes in the family's series.
func labelValues(mf *dto.MetricFamily, name string) []string {
	var values []string
	for _, m := range mf.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == name {
				values = append(values, l.GetValue())
			}
		}
	}
	return values
}

// gauge is the value of the family's series whose labels include want; the
// test fails if there is none.
func gauge(t *testing.T, mf *dto.MetricFamily, want map[string]string) float64 {
	t.Helper()
	require.NotNil(t, mf, "no such family")
	for _, m := range mf.GetMetric() {
		matched := 0
		for _, l := range m.GetLabel() {
			if v, ok := want[l.GetName()]; ok && v == l.GetValue() {
				matched++
			}
		}
		if matched == len(want) {
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no series of %s with labels %v", mf.GetName(), want)
	return 0
}
