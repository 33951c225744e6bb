package bench_test

// The HTTP benchmarks: one GET through a bare http.Client, through our
// transport (pipelinehttp.NewTransport, every default; and without the
// hedge) and through failsafe-go's failsafehttp round tripper with a
// comparable composition (http_failsafe_test.go, behind the build tag
// failsafehttp), over loopback (BenchmarkHTTP, BenchmarkHTTPInterleaved) and
// over a transport that answers at once (BenchmarkHTTPOverhead). The
// compositions come first, as compose.go keeps them for the other
// benchmarks; each client has a transport of its own, so that no client
// inherits another's connections. docs/http.md gives the figures.

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/bench"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/internal/hedgerule"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/pipelinehttp"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
	"github.com/resilience-go/pipeline/standard"
)

// ---- the compositions ----

// cannedTransport answers every request at once with a 200 and a small body,
// without a network: under it, a client's time is what its own layers cost.
type cannedTransport struct{}

func (cannedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, ContentLength: int64(len(httpOK)),
		Body: io.NopCloser(bytes.NewReader(httpOK)), Request: req,
	}, nil
}

// httpBase is a fresh transport like http.DefaultTransport, keeping enough
// idle connections that the benchmark never dials in its loop.
func httpBase() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	return t
}

// bareHTTP is a plain client: the floor.
func bareHTTP(base http.RoundTripper) *http.Client { return &http.Client{Transport: base} }

// oursHTTP is our transport with every default: per host, a 30 s timeout,
// three attempts paid from a budget, the breaker with its measured normals and
// recovery ramp, the hedge (armed once the host's latency is known, as it is
// after getter's warm-up) and a 10 s attempt timeout.
func oursHTTP(base http.RoundTripper) *http.Client {
	return &http.Client{Transport: pipelinehttp.NewTransport(base)}
}

// oursHTTPNoHedge is our transport without the hedge: the composition of the
// failsafehttp client (http_failsafe_test.go), stage for stage, plus the
// attempt timeout.
func oursHTTPNoHedge(base http.RoundTripper) *http.Client {
	tr, err := pipelinehttp.New(pipelinehttp.Config{Base: base, Standard: standard.Config{NoHedge: true}})
	if err != nil {
		panic(err)
	}
	return &http.Client{Transport: tr}
}

// failsafeHTTP are the failsafehttp rows, which http_failsafe_test.go
// defines: failsafe (our transport's composition less the hedge and the
// attempt timeout) and failsafe-card (the same stages as ours).
var failsafeHTTP []httpRow

// ---- the benchmark ----

// httpOK is the body of every reply: a small JSON document.
var httpOK = []byte(`{"status":"ok","items":[1,2,3]}`)

// httpRow is one row of the HTTP benchmarks: a client built over a base.
type httpRow struct {
	name   string
	client func(base http.RoundTripper) *http.Client
}

// httpRows are the rows, in order.
func httpRows() []httpRow {
	return append([]httpRow{{"bare", bareHTTP}, {"ours", oursHTTP}, {"ours-otel", oursHTTPObserved}, {"ours-nohedge", oursHTTPNoHedge}}, failsafeHTTP...)
}

// getter returns a function that GETs url with client, reads the body to its
// end, closes it and checks the reply; warmed up, so that a connection is in
// the pool and, for ours, the host's latency is known and the hedge armed on
// every call, as on a steady service.
func getter(b *testing.B, client *http.Client, url string) func() {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		b.Fatal(err)
	}
	get := func() {
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || n != int64(len(httpOK)) {
			b.Fatalf("status %d, %d bytes, %v", resp.StatusCode, n, err)
		}
	}
	for range 50 {
		get()
	}
	return get
}

// runHTTP benchmarks GETs of url by each client over a base from newBase.
func runHTTP(b *testing.B, url string, newBase func() http.RoundTripper) {
	for _, row := range httpRows() {
		b.Run("ok/"+row.name, func(b *testing.B) {
			client := row.client(newBase())
			defer client.CloseIdleConnections()
			get := getter(b, client, url)
			b.ReportAllocs()
			for b.Loop() {
				get()
			}
		})
	}
}

// BenchmarkHTTP is one GET of a small body over loopback, read to its end and
// closed, on the success path. Its rows are HTTP/ok/bare (the floor),
// HTTP/ok/ours, HTTP/ok/ours-otel (ours observed by the OpenTelemetry
// module), HTTP/ok/ours-nohedge and HTTP/ok/failsafe.
func BenchmarkHTTP(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(httpOK)
	}))
	defer srv.Close()
	runHTTP(b, srv.URL, func() http.RoundTripper { return httpBase() })
}

// BenchmarkHTTPInterleaved is BenchmarkHTTP for a machine whose speed
// drifts, as a shared one's does: each iteration sends one GET through every
// client, in a random order, so that a slow spell slows them all alike, and
// each client's median latency is reported as <row>-ns/GET (ns/op is the
// time of one GET through each client). The medians' differences are the
// time each client adds to a GET.
func BenchmarkHTTPInterleaved(b *testing.B) { interleave(b, httpRows()) }

// BenchmarkHTTPContexts is BenchmarkHTTPInterleaved for bare clients whose
// requests carry a context.WithCancel, one context.WithTimeout, or two nested
// ones, each ended when the body is closed: what the contexts and timers a
// pipeline derives cost a loopback GET, beyond the CPU they take.
func BenchmarkHTTPContexts(b *testing.B) {
	wrap := func(n int, timed bool) func(http.RoundTripper) *http.Client {
		return func(base http.RoundTripper) *http.Client {
			for range n {
				base = contextTransport{base: base, timed: timed}
			}
			return &http.Client{Transport: base}
		}
	}
	interleave(b, []httpRow{
		{"bare", bareHTTP}, {"cancel", wrap(1, false)}, {"timeout", wrap(1, true)}, {"timeout2", wrap(2, true)},
	})
}

// contextTransport sends each request with a context derived from its own,
// ended when the response's body is closed.
type contextTransport struct {
	base  http.RoundTripper
	timed bool // a context.WithTimeout (a timer) rather than a WithCancel
}

func (c contextTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	if c.timed {
		ctx, cancel = context.WithTimeout(req.Context(), bench.PresetTimeout)
	}
	resp, err := c.base.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &endingBody{ReadCloser: resp.Body, end: cancel}
	return resp, nil
}

// endingBody runs end when it is closed.
type endingBody struct {
	io.ReadCloser
	end func()
}

func (b *endingBody) Close() error {
	err := b.ReadCloser.Close()
	b.end()
	return err
}

// interleave runs the interleaved loopback benchmark of rows.
func interleave(b *testing.B, rows []httpRow) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(httpOK)
	}))
	defer srv.Close()
	gets := make([]func(), len(rows))
	for i, row := range rows {
		client := row.client(httpBase())
		defer client.CloseIdleConnections()
		gets[i] = getter(b, client, srv.URL)
	}
	took := make([][]time.Duration, len(rows))
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	// A random order, not a rotation: a GET is slowed by what the one before
	// it left running (its connection going back to the pool, the garbage
	// it made), so each client must follow every other as often.
	rng := rand.New(rand.NewPCG(1, 2))
	for b.Loop() {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, k := range order {
			start := time.Now()
			gets[k]()
			took[k] = append(took[k], time.Since(start))
		}
	}
	for k, row := range rows {
		slices.Sort(took[k])
		b.ReportMetric(float64(took[k][len(took[k])/2]), row.name+"-ns/GET")
	}
}

// BenchmarkHTTPStages is what the standard pipeline's stages cost a request on
// their own: the compositions of the preset, cumulatively, with the hooks an
// *http.Response needs (classify, hold until the body is closed, release),
// executed over the transport that answers at once, with no http.Client.
func BenchmarkHTTPStages(b *testing.B) {
	funds := must(budget.New(budget.Config{}))
	brk := must(breaker.New(breaker.Config{}))
	est := must(latency.New(latency.Config{}))
	for range hedgerule.DefaultMinSamples {
		est.Record(est.Now(), time.Microsecond)
	}
	whole := timeout.Config{Timeout: bench.PresetTimeout}
	each := timeout.Config{Timeout: bench.PresetAttemptTimeout}
	hedges := hedge.Config{Repeatable: true, Breaker: brk, Budget: funds, Estimator: est}
	req, err := http.NewRequest(http.MethodGet, "http://service.test/items", nil)
	if err != nil {
		b.Fatal(err)
	}
	fn := func(ctx context.Context) (*http.Response, error) {
		return cannedTransport{}.RoundTrip(req.WithContext(ctx))
	}
	for _, c := range []struct {
		name   string
		stages []any
	}{
		{"1-hooks", nil},
		{"2-timeout", []any{whole}},
		{"3-retry-breaker", []any{whole, retry.Config{Budget: funds}, brk}},
		{"4-attempt-timeout", []any{whole, retry.Config{Budget: funds}, brk, each}},
		{"5-hedge", []any{whole, retry.Config{Budget: funds}, brk, hedges, each}},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := must(standard.Compose[*http.Response](c.stages...)).With(pipeline.Options[*http.Response]{
				Classifier: func(r *http.Response, err error) (outcome.Verdict, bool) {
					if err != nil {
						return outcome.Verdict{}, false
					}
					return outcome.HTTPStatus(r.StatusCode, r.Header.Get("Retry-After"), time.Time{}), true
				},
				Release: func(r *http.Response) { _ = r.Body.Close() },
				WhenReleased: func(r *http.Response, done func()) *http.Response {
					r.Body = &endingBody{ReadCloser: r.Body, end: done}
					return r
				},
			})
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				resp, err := p.Execute(ctx, fn)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
		})
	}
}

// must returns v, or fails the benchmark's setup with err.
func must[V any](v V, err error) V {
	if err != nil {
		panic(err)
	}
	return v
}

// BenchmarkHTTPOverhead is BenchmarkHTTP over a transport that answers at
// once, without a network: the time each client's own layers take, which a
// loopback round trip (tens of microseconds, and noisy on a shared machine)
// hides. The bare row is http.Client itself.
func BenchmarkHTTPOverhead(b *testing.B) {
	runHTTP(b, "http://service.test/items", func() http.RoundTripper { return cannedTransport{} })
}
