package observe_test

// What every test reads its integration through: an SDK meter provider
// collected by hand, a logger writing JSON lines to memory, and the health
// view served over HTTP, as a service would serve it.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/resilience-go/pipeline/health"
	pipelineotel "github.com/resilience-go/pipeline/otel"
	"github.com/resilience-go/pipeline/policy/retry"
)

// fastRetries waits a millisecond at most between attempts, so that a storm
// of failures trips a breaker in a few milliseconds of real time, and lets a
// call an open breaker refuses return at once (the integrations' default,
// not the preset's).
var fastRetries = retry.Config{Backoff: retry.Constant{Interval: time.Millisecond}, RefusalPause: -1}

// storm is how many calls a test makes to a failing server: enough to trip
// a breaker at its default of five failures in a row whatever the retries
// do, few enough that the breaker's break (seconds long) cannot end while
// they run.
const storm = 10

// flaky is a loopback HTTP server that answers 200 until fail is called, and
// 503 to every request after that.
type flaky struct {
	*httptest.Server
	failing atomic.Bool
}

func newFlaky(t *testing.T) *flaky {
	t.Helper()
	f := new(flaky)
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if f.failing.Load() {
			http.Error(w, "storm", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("fine"))
	}))
	t.Cleanup(f.Close)
	return f
}

// fail makes every later request fail.
func (f *flaky) fail() { f.failing.Store(true) }

// meter is the Telemetry a test hands its integration, on an SDK meter
// provider whose metrics the test collects when it wants them.
type meter struct {
	tel    *pipelineotel.Telemetry
	reader *sdkmetric.ManualReader
}

func newMeter(t *testing.T) meter {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	tel, err := pipelineotel.New(pipelineotel.Config{MeterProvider: mp})
	require.NoError(t, err)
	return meter{tel: tel, reader: reader}
}

// point is one data point: its attributes, and its value (a counter's or a
// gauge's) or its count (a histogram's).
type point struct {
	attrs attribute.Set
	value float64
	count uint64
}

// metrics is one collection: every instrument's points, by its name.
type metrics map[string][]point

// collect reads every instrument once; the observable gauges read the
// breakers and budgets then.
func (m meter) collect(t *testing.T) metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, m.reader.Collect(context.Background(), &rm))
	got := metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, inst := range sm.Metrics {
			switch d := inst.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					got[inst.Name] = append(got[inst.Name], point{attrs: p.Attributes, count: p.Count})
				}
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					got[inst.Name] = append(got[inst.Name], point{attrs: p.Attributes, value: float64(p.Value)})
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					got[inst.Name] = append(got[inst.Name], point{attrs: p.Attributes, value: float64(p.Value)})
				}
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					got[inst.Name] = append(got[inst.Name], point{attrs: p.Attributes, value: p.Value})
				}
			default:
				t.Fatalf("%s: data of an unexpected type %T", inst.Name, inst.Data)
			}
		}
	}
	return got
}

// points returns the points of the instrument named name whose attributes
// hold every one of kvs.
func (m metrics) points(name string, kvs ...attribute.KeyValue) []point {
	var out []point
next:
	for _, p := range m[name] {
		for _, kv := range kvs {
			if v, ok := p.attrs.Value(kv.Key); !ok || v != kv.Value {
				continue next
			}
		}
		out = append(out, p)
	}
	return out
}

// states returns the states the breaker-state gauge reports for the breaker
// named name: one, while the breaker is observed.
func (m metrics) states(name string) []string {
	var out []string
	for _, p := range m.points(pipelineotel.MetricBreakerState, pipelineotel.AttrBreaker.String(name)) {
		v, _ := p.attrs.Value(pipelineotel.AttrBreakerState)
		out = append(out, v.AsString())
	}
	return out
}

// calls returns how many calls of family the call-duration histogram counts
// with the outcome given.
func (m metrics) calls(family, outcome string) uint64 {
	var n uint64
	for _, p := range m.points(pipelineotel.MetricCallDuration, pipelineotel.AttrPipeline.String(family), pipelineotel.AttrOutcome.String(outcome)) {
		n += p.count
	}
	return n
}

// total returns how many calls of family the call-duration histogram
// counts, whatever their outcome.
func (m metrics) total(family string) uint64 {
	var n uint64
	for _, p := range m.points(pipelineotel.MetricCallDuration, pipelineotel.AttrPipeline.String(family)) {
		n += p.count
	}
	return n
}

// trips returns how many transitions to open the transitions counter holds
// for the breakers labelled family, by cause.
func (m metrics) trips(family string) map[string]float64 {
	out := map[string]float64{}
	for _, p := range m.points(pipelineotel.MetricBreakerTransitions, pipelineotel.AttrBreaker.String(family), pipelineotel.AttrBreakerState.String("open")) {
		cause, _ := p.attrs.Value(pipelineotel.AttrBreakerCause)
		out[cause.AsString()] += p.value
	}
	return out
}

// gauge returns the one value the gauge named name reports with the
// attribute kv, failing the test if it reports none or several.
func (m metrics) gauge(t *testing.T, name string, kv attribute.KeyValue) float64 {
	t.Helper()
	ps := m.points(name, kv)
	require.Len(t, ps, 1, "%s{%s=%s}", name, kv.Key, kv.Value.String())
	return ps[0].value
}

// logs is a logger that writes JSON lines to memory: the handler writes one
// line at a time, and the test reads them between calls.
type logs struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (l *logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// newLogs returns the buffer and a logger writing to it from Info up, as a
// service logs by default.
func newLogs() (*logs, *slog.Logger) {
	l := new(logs)
	return l, slog.New(slog.NewJSONHandler(l, nil))
}

// record is one line pipeline.LogEvents wrote.
type record struct {
	Level    string         `json:"level"`
	Msg      string         `json:"msg"`
	Pipeline string         `json:"pipeline"`
	Stage    string         `json:"stage"`
	Name     string         `json:"name"`
	Event    map[string]any `json:"event"`
}

// transitions returns the breaker transitions logged for the breaker named
// name, in order.
func (l *logs) transitions(t *testing.T, name string) []record {
	t.Helper()
	l.mu.Lock()
	text := bytes.Clone(l.buf.Bytes())
	l.mu.Unlock()
	var out []record
	lines := bufio.NewScanner(bytes.NewReader(text))
	for lines.Scan() {
		var r record
		require.NoError(t, json.Unmarshal(lines.Bytes(), &r), "a line that is not JSON: %s", lines.Text())
		if r.Msg == "breaker.transition" && r.Name == name {
			out = append(out, r)
		}
	}
	require.NoError(t, lines.Err())
	return out
}

// serveHealth serves a health view of srcs on a loopback server, as a
// service serves it on its health endpoint, and returns a function that
// fetches and decodes it.
func serveHealth(t *testing.T, srcs ...health.Source) func() health.Report {
	t.Helper()
	var view health.Registry
	for _, s := range srcs {
		view.Add(s)
	}
	srv := httptest.NewServer(&view)
	t.Cleanup(srv.Close)
	return func() health.Report {
		t.Helper()
		resp, err := srv.Client().Get(srv.URL)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var r health.Report
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
		return r
	}
}

// dependency returns the dependency named name in r, failing the test if r
// does not list it.
func dependency(t *testing.T, r health.Report, name string) health.Dependency {
	t.Helper()
	for _, d := range r.Dependencies {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("the health view does not list %q: %+v", name, r.Dependencies)
	panic("unreachable")
}
