package shed_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/policy/adaptive"
	"github.com/resilience-go/pipeline/policy/bulkhead"
	"github.com/resilience-go/pipeline/policy/ratelimit"
	"github.com/resilience-go/pipeline/shed"
)

func TestBadConfigsAreRefused(t *testing.T) {
	b, err := bulkhead.New(bulkhead.Config{MaxConcurrent: 1})
	require.NoError(t, err)
	ok := http.NotFoundHandler()
	var nilLimiter *ratelimit.Limiter
	for _, tc := range []struct {
		name string
		next http.Handler
		cfg  shed.Config
		want string
	}{
		{"no next handler", nil, shed.Config{Limits: []pipeline.Described{b}}, "next handler is nil"},
		{"no limits", ok, shed.Config{}, "Config.Limits is empty"},
		{"a nil limit", ok, shed.Config{Limits: []pipeline.Described{b, nil}}, "Config.Limits[1]: nil"},
		{"a limiter whose constructor failed", ok, shed.Config{Limits: []pipeline.Described{nilLimiter}}, "Config.Limits[0]: nil (*ratelimit.Limiter)"},
		{"not a limit", ok, shed.Config{Limits: []pipeline.Described{notALimit{}}}, "Config.Limits[0]: a shed_test.notALimit is neither"},
		{"negative retry-after", ok, shed.Config{Limits: []pipeline.Described{b}, RetryAfter: -time.Second}, "Config.RetryAfter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := shed.New(tc.next, tc.cfg)
			assert.Nil(t, h)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// notALimit describes itself as a stage but is none that shed takes.
type notALimit struct{}

func (notALimit) Stage() pipeline.StageInfo { return pipeline.StageInfo{Kind: "other"} }

// gate is a handler that holds every request until it is opened, counting
// how many it holds at once.
type gate struct {
	open        chan struct{}
	inside, max atomic.Int32
}

func newGate() *gate { return &gate{open: make(chan struct{})} }

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := g.inside.Add(1)
	defer g.inside.Add(-1)
	for {
		m := g.max.Load()
		if n <= m || g.max.CompareAndSwap(m, n) {
			break
		}
	}
	select {
	case <-g.open:
		w.WriteHeader(http.StatusOK)
	case <-r.Context().Done():
	}
}

// TestABurstIsShedAtTheLimit sends 50 requests at once to a handler behind a
// bulkhead of 4: four are served, the rest answered 503 at once with a
// Retry-After, and nothing is left running.
func TestABurstIsShedAtTheLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := bulkhead.New(bulkhead.Config{MaxConcurrent: 4})
		require.NoError(t, err)
		g := newGate()
		h, err := shed.New(g, shed.Config{Limits: []pipeline.Described{b}})
		require.NoError(t, err)

		const burst = 50
		codes := make([]*httptest.ResponseRecorder, burst)
		var wg sync.WaitGroup
		for i := range burst {
			codes[i] = httptest.NewRecorder()
			wg.Go(func() { h.ServeHTTP(codes[i], httptest.NewRequest(http.MethodGet, "/", nil)) })
		}
		synctest.Wait() // every request is held by the gate or answered
		assert.EqualValues(t, 4, g.inside.Load())
		refused := 0
		for _, rec := range codes {
			if rec.Code == http.StatusServiceUnavailable {
				refused++
				assert.Equal(t, "1", rec.Header().Get("Retry-After"), "a bulkhead has no hint: the default second")
			}
		}
		assert.Equal(t, burst-4, refused, "refused at once, while the gate still holds the others")
		close(g.open)
		wg.Wait()
		served := 0
		for _, rec := range codes {
			if rec.Code == http.StatusOK {
				served++
			}
		}
		assert.Equal(t, 4, served)
		assert.EqualValues(t, 4, g.max.Load(), "never more than the limit inside")
		assert.Equal(t, 0, b.InFlight())
	})
}

func TestARateLimitAnswers429WithTheTimeUntilAToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, err := ratelimit.New(ratelimit.Config{Rate: 0.4, Burst: 1}) // a token every 2.5 s
		require.NoError(t, err)
		h, err := shed.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), shed.Config{Limits: []pipeline.Described{l}})
		require.NoError(t, err)
		first, second := httptest.NewRecorder(), httptest.NewRecorder()
		h.ServeHTTP(first, httptest.NewRequest(http.MethodGet, "/", nil))
		time.Sleep(time.Second)
		h.ServeHTTP(second, httptest.NewRequest(http.MethodGet, "/", nil))
		assert.Equal(t, http.StatusOK, first.Code)
		assert.Equal(t, http.StatusTooManyRequests, second.Code)
		assert.Equal(t, "2", second.Header().Get("Retry-After"), "1.5 s until the next token, rounded up")
	})
}

func TestAnAdaptiveLimitAnswers503WithItsHint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		est, err := latency.New(latency.Config{})
		require.NoError(t, err)
		for range 20 {
			est.Record(est.Now(), 2500*time.Millisecond) // a slow handler: a slot frees every 2.5 s
		}
		l, err := adaptive.New(adaptive.Config{Estimator: est, InitialLimit: 1, MinLimit: 1, MaxLimit: 1, Interval: time.Millisecond, MinSamples: 1})
		require.NoError(t, err)
		g := newGate()
		h, err := shed.New(g, shed.Config{Limits: []pipeline.Described{l}})
		require.NoError(t, err)
		// One request, a millisecond in, revises the limiter: its hint is the
		// median latency.
		time.Sleep(time.Millisecond)
		close(g.open)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
		time.Sleep(time.Millisecond)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))

		hold := make(chan struct{})
		busy, err := shed.New(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-hold }), shed.Config{Limits: []pipeline.Described{l}})
		require.NoError(t, err)
		go busy.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
		synctest.Wait()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		close(hold)
		assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
		assert.Equal(t, "3", rec.Header().Get("Retry-After"))
	})
}

func TestAPanicGoesOnUpAndFreesTheSlot(t *testing.T) {
	b, err := bulkhead.New(bulkhead.Config{MaxConcurrent: 1})
	require.NoError(t, err)
	h, err := shed.New(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }), shed.Config{Limits: []pipeline.Described{b}})
	require.NoError(t, err)
	assert.PanicsWithValue(t, http.ErrAbortHandler, func() {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	})
	assert.Equal(t, 0, b.InFlight())
}

func TestAQueuedRequestWhoseClientLeftGets503WithoutRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := bulkhead.New(bulkhead.Config{MaxConcurrent: 1, MaxQueue: 1, MaxWait: time.Hour})
		require.NoError(t, err)
		g := newGate()
		h, err := shed.New(g, shed.Config{Limits: []pipeline.Described{b}})
		require.NoError(t, err)
		go h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
		synctest.Wait()
		ctx, cancel := context.WithCancel(t.Context())
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx))
			close(done)
		}()
		synctest.Wait()
		assert.Equal(t, 1, b.Queued())
		cancel()
		<-done
		assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
		assert.Empty(t, rec.Header().Get("Retry-After"))
		close(g.open)
	})
}

func TestServingAllocatesNothingOfItsOwn(t *testing.T) {
	b, err := bulkhead.New(bulkhead.Config{MaxConcurrent: 1})
	require.NoError(t, err)
	h, err := shed.New(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), shed.Config{Limits: []pipeline.Described{b}})
	require.NoError(t, err)
	w, r := httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil)
	h.ServeHTTP(w, r)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { h.ServeHTTP(w, r) }))
}

func TestRetryAfterRoundsUpToWholeSeconds(t *testing.T) {
	for _, tc := range []struct {
		hint, def time.Duration
		want      string
	}{
		{0, time.Second, "1"}, {0, 0, "1"}, {time.Millisecond, 0, "1"}, {time.Second, 0, "1"},
		{1001 * time.Millisecond, 0, "2"}, {0, 5 * time.Second, "5"}, {90 * time.Second, time.Second, "90"},
	} {
		assert.Equal(t, tc.want, shed.RetryAfter(&pipeline.StopError{RetryAfter: tc.hint}, tc.def), "%v, default %v", tc.hint, tc.def)
	}
}
