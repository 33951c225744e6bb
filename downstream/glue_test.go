package downstream_test

// The glue a user writes to run HTTP calls through the pipeline: T is
// *http.Response, and the pipeline is told how to judge a response, how to free
// one it throws away, and how to keep a response's context alive until the
// caller has read its body.

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// drainLimit is how much of a discarded body Release reads before closing it,
// so that a short body (a 503's) leaves its connection reusable while a long
// one is cut off rather than downloaded for nothing.
const drainLimit = 64 << 10

// httpOptions is the glue for T = *http.Response.
func httpOptions(onEvent func(context.Context, pipeline.Source, pipeline.Event)) pipeline.Options[*http.Response] {
	return pipeline.Options[*http.Response]{
		// A response that arrived is judged by its status (a 503 is Transient,
		// with its Retry-After hint); an error is left to the built-in rules.
		Classifier: func(resp *http.Response, err error) (outcome.Verdict, bool) {
			if err != nil || resp == nil {
				return outcome.Verdict{}, false
			}
			return outcome.HTTPStatus(resp.StatusCode, resp.Header.Get("Retry-After"), time.Now()), true
		},
		// A response the pipeline drops (a retried 503, a hedge's loser) is
		// drained a little, so its connection can be reused, and closed.
		Release: func(resp *http.Response) {
			_, _ = io.CopyN(io.Discard, resp.Body, drainLimit)
			_ = resp.Body.Close()
		},
		// The response handed on carries the stages' contexts in its body: they
		// end when the body is closed, by the caller or by Release.
		WhenReleased: func(resp *http.Response, done func()) *http.Response {
			resp.Body = &releasingBody{ReadCloser: resp.Body, done: done}
			return resp
		},
		Describe: func(resp *http.Response) string { return resp.Status },
		OnEvent:  onEvent,
	}
}

// releasingBody is a body whose Close also ends what a stage held for it.
type releasingBody struct {
	io.ReadCloser
	done func()
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.done()
	return err
}

// newStages builds the recommended stages for one dependency: timeout -> retry
// (paid from a budget) -> breaker -> hedge. The hedge's estimator is pre-warmed
// with 1 ms samples, so it is armed from the first call and hedges after its
// 5 ms floor; there are many of them so that the test's own slow replies (a
// few percent of its samples) do not lift the p95 above that floor.
func newStages(t testing.TB) []pipeline.Policy[*http.Response] {
	t.Helper()
	// The tests script their failures spread among their goroutines, but on
	// a loaded machine five of them can still come back in a row (a 503
	// returns before the bodies of the calls around it): that trip would be
	// the scheduler's doing, not the subject of any test here.
	brk, err := breaker.New(breaker.Config{ConsecutiveFailures: 20, OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
		if tr, ok := e.(breaker.Transition); ok {
			t.Logf("breaker: %+v", tr) // a trip is a test's bad luck to explain
		}
	}})
	require.NoError(t, err)
	funds, err := budget.New(budget.Config{Capacity: 1000})
	require.NoError(t, err)
	deadline, err := timeout.New[*http.Response](timeout.Config{Timeout: 10 * time.Second})
	require.NoError(t, err)
	retries, err := retry.New[*http.Response](retry.Config{Budget: funds})
	require.NoError(t, err)
	est, err := latency.New(latency.Config{})
	require.NoError(t, err)
	for range 200 {
		est.Record(est.Now(), time.Millisecond)
	}
	hedges, err := hedge.New[*http.Response](hedge.Config{
		// MaxExtra 1: every call the tests slow down is hedged, far more than
		// the 5% the stage would send by default.
		Repeatable: true, Estimator: est, MinDelay: 5 * time.Millisecond, Budget: funds, MaxExtra: 1,
	})
	require.NoError(t, err)
	return []pipeline.Policy[*http.Response]{deadline, retries, breaker.Guard[*http.Response](brk), hedges}
}

// newPipeline is the full pipeline with the glue; edit, if given, changes the
// options first (a test drops a hook to show what it is for).
func newPipeline(t testing.TB, events *eventLog, edit func(*pipeline.Options[*http.Response])) *pipeline.Pipeline[*http.Response] {
	o := httpOptions(events.record)
	if edit != nil {
		edit(&o)
	}
	return pipeline.New(newStages(t)...).With(o)
}

// get is the unit of work: one GET of call number call, tagged so that the
// server can script its replies per call.
func get(client *http.Client, url string, call int) pipeline.Func[*http.Response] {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		panic(err)
	}
	req.Header.Set(callHeader, strconv.Itoa(call))
	return func(ctx context.Context) (*http.Response, error) {
		return client.Do(req.WithContext(ctx))
	}
}

// eventLog counts the pipeline's events by name.
type eventLog struct {
	mu sync.Mutex
	n  map[string]int
}

func (l *eventLog) record(_ context.Context, _ pipeline.Source, e pipeline.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == nil {
		l.n = make(map[string]int)
	}
	l.n[e.Name()]++
}

func (l *eventLog) count(name string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n[name]
}
