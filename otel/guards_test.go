package pipelineotel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/otel"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/adaptive"
	"github.com/resilience-go/pipeline/policy/bulkhead"
	"github.com/resilience-go/pipeline/policy/ceiling"
	"github.com/resilience-go/pipeline/policy/fallback"
	"github.com/resilience-go/pipeline/policy/fault"
	"github.com/resilience-go/pipeline/policy/ratelimit"
	"github.com/resilience-go/pipeline/policy/timeout"
	"github.com/resilience-go/pipeline/standard"
)

// guarded builds a card named name of the stages given, with the Calls
// stage outermost and r's hook.
func guarded(t *testing.T, r rig, name string, stages ...any) *pipeline.Pipeline[string] {
	t.Helper()
	p, err := standard.Compose[string](append([]any{pipelineotel.Calls[string](r.tel)}, stages...)...)
	require.NoError(t, err)
	return p.With(pipeline.Options[string]{Name: name, OnEvent: r.tel.Hook()})
}

// run executes fn through p in a span of its own, named span.
func (r rig) run(p *pipeline.Pipeline[string], span string, fn pipeline.Func[string]) error {
	ctx, s := r.tracer.Start(context.Background(), span)
	defer s.End()
	_, err := p.Execute(ctx, fn)
	return err
}

// sleeper is work that answers "ok" after d, or the context's error.
func sleeper(d time.Duration) pipeline.Func[string] {
	return func(ctx context.Context) (string, error) { return "ok", wait(ctx, d) }
}

// TestGuardScenario runs the newer stages, each in a card of its own with
// the Calls stage outermost, through a scripted run on virtual time, and
// checks every data point and every span event of theirs:
//
//	rl  rate limit of 10 a second, burst 1, waits of up to 150 ms:
//	    A passes at t=0, B waits 100 ms for the next token, C (at t=0,
//	    while B waits) would wait 200 ms and is refused
//	bh  bulkhead of 1 slot and a queue of 1: A holds the slot for 30 ms,
//	    B queues for those 30 ms, C finds the queue full and is refused
//	ad  adaptive limit starting at 1, with a queue of 1: A, B and C as for
//	    bh; a second later D takes 30 ms and ends the first interval, whose
//	    latency held and whose calls used the whole limit: it grows to 2
//	fb  a fallback around a ceiling of twice the median latency: A takes
//	    20 ms and arms it; B and C hang, are cut at 40 ms, and the fallback
//	    replaces B's result and fails to replace C's; the cuts raise the
//	    ceiling to about 80 ms
//	ft  fault injection of a 5 ms latency then a throttled error, for
//	    every call: one call
func TestGuardScenario(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t)
		concurrent := func(calls ...func()) *sync.WaitGroup {
			var wg sync.WaitGroup
			for _, c := range calls {
				wg.Go(c)
				synctest.Wait() // each call is blocked where it waits before the next starts
			}
			return &wg
		}

		lim, err := ratelimit.New(ratelimit.Config{Name: "rl", Rate: 10, Burst: 1, MaxWait: 150 * time.Millisecond})
		require.NoError(t, err)
		defer r.tel.ObserveRateLimiter(lim)()
		rl := guarded(t, r, "rl", lim)
		require.NoError(t, r.run(rl, "rl.A", sleeper(0)))
		wg := concurrent(func() { assert.NoError(t, r.run(rl, "rl.B", sleeper(0))) })
		assert.Equal(t, []string{"resilience.ratelimit.tokens{stage.kind=ratelimit,stage.name=rl} -1"},
			matching(r.metrics(t), "resilience.ratelimit"), "while B waits for a token promised to it")
		assert.ErrorIs(t, r.run(rl, "rl.C", sleeper(0)), pipeline.RateLimited)
		wg.Wait()

		bh, err := bulkhead.New(bulkhead.Config{Name: "bh", MaxConcurrent: 1, MaxQueue: 1, MaxWait: time.Second})
		require.NoError(t, err)
		defer r.tel.ObserveBulkhead(bh)()
		ad, err := adaptive.New(adaptive.Config{Name: "ad", InitialLimit: 1, MinLimit: 1, MaxLimit: 10, MinSamples: 1, MaxQueue: 1})
		require.NoError(t, err)
		defer r.tel.ObserveAdaptiveLimiter(ad)()
		for _, c := range []struct {
			name  string
			stage pipeline.Described
		}{{"bh", bh}, {"ad", ad}} {
			p := guarded(t, r, c.name, c.stage)
			wg := concurrent(
				func() { assert.NoError(t, r.run(p, c.name+".A", sleeper(30*time.Millisecond))) },
				func() { assert.NoError(t, r.run(p, c.name+".B", sleeper(30*time.Millisecond))) },
			)
			assert.ErrorIs(t, r.run(p, c.name+".C", sleeper(0)), pipeline.ConcurrencyLimited)
			if c.name == "bh" {
				assert.Equal(t, []string{
					"resilience.concurrency.in_flight{stage.kind=adaptive,stage.name=ad} 0",
					"resilience.concurrency.in_flight{stage.kind=bulkhead,stage.name=bh} 1",
					"resilience.concurrency.limit{stage.kind=adaptive,stage.name=ad} 1",
					"resilience.concurrency.limit{stage.kind=bulkhead,stage.name=bh} 1",
					"resilience.concurrency.queued{stage.kind=adaptive,stage.name=ad} 0",
					"resilience.concurrency.queued{stage.kind=bulkhead,stage.name=bh} 1",
				}, matching(r.metrics(t), "resilience.concurrency"), "while A is inside and B queues")
			}
			wg.Wait()
		}
		time.Sleep(time.Second) // past the end of the adaptive limit's first interval
		require.NoError(t, r.run(guarded(t, r, "ad", ad), "ad.D", sleeper(30*time.Millisecond)))

		ceil := ceiling.Config{Name: "cl", MinSamples: 1, Multiple: 2, Quantile: 0.5, Floor: 10 * time.Millisecond}
		cl, err := ceiling.New[string](ceil)
		require.NoError(t, err)
		defer pipelineotel.ObserveCeiling(r.tel, cl)()
		replaced := 0
		fb := guarded(t, r, "fb", fallback.Config[string]{Name: "fb", Func: func(context.Context, pipeline.Result[string]) (string, error) {
			if replaced++; replaced > 1 {
				return "", errors.New("no spare")
			}
			return "spare", nil
		}}, cl)
		require.NoError(t, r.run(fb, "fb.A", sleeper(20*time.Millisecond)))
		require.NoError(t, r.run(fb, "fb.B", sleeper(time.Minute)), "replaced by the fallback")
		assert.ErrorIs(t, r.run(fb, "fb.C", sleeper(time.Minute)), context.DeadlineExceeded)
		// The cuts were recorded (40 ms each) beside A's 20 ms: the median,
		// and the ceiling with it, rose to about 80 ms, as the estimator's
		// buckets place it.
		ceilingNow, armed := cl.Limit(cl.Estimator().Now())
		require.True(t, armed)
		assert.InDelta(t, 80*time.Millisecond, ceilingNow, float64(time.Millisecond))

		ft := guarded(t, r, "ft", fault.Config[string]{Name: "ft", Enabled: true, Latency: 1, Delay: 5 * time.Millisecond, Throttled: 1, RetryAfter: 2 * time.Second})
		assert.ErrorIs(t, r.run(ft, "ft.A", sleeper(0)), fault.ErrInjected)

		assert.Equal(t, []string{
			"resilience.adaptive.revisions{adaptive.why=grew,stage.kind=adaptive,stage.name=ad} 1",
			"resilience.admission.wait{pipeline.name=ad,stage.kind=adaptive,stage.name=ad} count=1 sum=0.03",
			"resilience.admission.wait{pipeline.name=bh,stage.kind=bulkhead,stage.name=bh} count=1 sum=0.03",
			"resilience.admission.wait{pipeline.name=rl,stage.kind=ratelimit,stage.name=rl} count=1 sum=0.1",
			"resilience.attempt.duration{pipeline.name=ad,verdict=ok} count=3 sum=0.09",
			"resilience.attempt.duration{pipeline.name=bh,verdict=ok} count=2 sum=0.06",
			"resilience.attempt.duration{pipeline.name=fb,verdict=ok} count=1 sum=0.02",
			"resilience.attempt.duration{pipeline.name=fb,verdict=transient} count=2 sum=0.08",
			"resilience.attempt.duration{pipeline.name=rl,verdict=ok} count=2 sum=0",
			"resilience.call.duration{outcome=concurrency_limited,pipeline.name=ad} count=1 sum=0",
			"resilience.call.duration{outcome=concurrency_limited,pipeline.name=bh} count=1 sum=0",
			"resilience.call.duration{outcome=deadline,pipeline.name=fb} count=1 sum=0.04",
			"resilience.call.duration{outcome=error,pipeline.name=ft} count=1 sum=0.005",
			"resilience.call.duration{outcome=ok,pipeline.name=ad} count=3 sum=0.12",
			"resilience.call.duration{outcome=ok,pipeline.name=bh} count=2 sum=0.09",
			"resilience.call.duration{outcome=ok,pipeline.name=fb} count=2 sum=0.06",
			"resilience.call.duration{outcome=ok,pipeline.name=rl} count=2 sum=0.1",
			"resilience.call.duration{outcome=rate_limited,pipeline.name=rl} count=1 sum=0",
			fmt.Sprintf("resilience.ceiling.limit{stage.kind=ceiling,stage.name=cl} %.6g", ceilingNow.Seconds()),
			"resilience.concurrency.in_flight{stage.kind=adaptive,stage.name=ad} 0",
			"resilience.concurrency.in_flight{stage.kind=bulkhead,stage.name=bh} 0",
			"resilience.concurrency.limit{stage.kind=adaptive,stage.name=ad} 2",
			"resilience.concurrency.limit{stage.kind=bulkhead,stage.name=bh} 1",
			"resilience.concurrency.queued{stage.kind=adaptive,stage.name=ad} 0",
			"resilience.concurrency.queued{stage.kind=bulkhead,stage.name=bh} 0",
			"resilience.fallbacks{fallback.failed=true,fallback.reason=deadline,pipeline.name=fb,stage.kind=fallback,stage.name=fb} 1",
			"resilience.fallbacks{fallback.reason=deadline,pipeline.name=fb,stage.kind=fallback,stage.name=fb} 1",
			"resilience.faults{fault.kind=latency,pipeline.name=ft,stage.kind=fault,stage.name=ft} 1",
			"resilience.faults{fault.kind=throttled,pipeline.name=ft,stage.kind=fault,stage.name=ft} 1",
			"resilience.ratelimit.tokens{stage.kind=ratelimit,stage.name=rl} 1",
			"resilience.refusal.retry_after{pipeline.name=ad,stage.kind=adaptive,stage.name=ad,stop.reason=concurrency_limited} count=1 sum=0",
			"resilience.refusal.retry_after{pipeline.name=bh,stage.kind=bulkhead,stage.name=bh,stop.reason=concurrency_limited} count=1 sum=0",
			"resilience.refusal.retry_after{pipeline.name=rl,stage.kind=ratelimit,stage.name=rl,stop.reason=rate_limited} count=1 sum=0.2",
			"resilience.stops{pipeline.name=ad,stage.kind=adaptive,stage.name=ad,stop.reason=concurrency_limited} 1",
			"resilience.stops{pipeline.name=bh,stage.kind=bulkhead,stage.name=bh,stop.reason=concurrency_limited} 1",
			"resilience.stops{pipeline.name=fb,stage.kind=ceiling,stage.name=cl,stop.reason=deadline} 2",
			"resilience.stops{pipeline.name=rl,stage.kind=ratelimit,stage.name=rl,stop.reason=rate_limited} 1",
			"resilience.timeouts{pipeline.name=fb,stage.kind=ceiling,stage.name=cl} 2",
		}, r.metrics(t))

		assert.Equal(t, []string{
			"wait pipeline.name=rl stage.kind=ratelimit stage.name=rl wait=0.1",
		}, matching(r.events("rl.B"), "wait"))
		assert.Equal(t, []string{
			"stop pipeline.name=rl retry_after=0.2 stage.kind=ratelimit stage.name=rl stop.reason=rate_limited stop.stage.kind=ratelimit stop.stage.name=rl",
		}, r.events("rl.C"))
		assert.Equal(t, []string{
			"wait pipeline.name=bh stage.kind=bulkhead stage.name=bh wait=0.03",
		}, matching(r.events("bh.B"), "wait"))
		assert.Equal(t, []string{
			"wait limit=1 pipeline.name=ad queued=0 stage.kind=adaptive stage.name=ad wait=0.03",
		}, matching(r.events("ad.B"), "wait"))
		assert.Equal(t, []string{
			"stop pipeline.name=ad stage.kind=adaptive stage.name=ad stop.reason=concurrency_limited stop.stage.kind=adaptive stop.stage.name=ad",
		}, r.events("ad.C"))
		last := ad.Snapshot().Last // its latencies are the estimator's readings of 30 ms
		assert.Equal(t, []string{
			fmt.Sprintf("adaptive.revision adaptive.baseline=%.6g adaptive.from=1 adaptive.recent=%.6g adaptive.to=2 adaptive.why=grew pipeline.name=ad stage.kind=adaptive stage.name=ad",
				last.Baseline.Seconds(), last.Recent.Seconds()),
		}, matching(r.events("ad.D"), "adaptive"))
		assert.Equal(t, []string{
			"attempt attempt=1 duration=0.04 error.message=context deadline exceeded pipeline.name=fb stage.kind=pipeline stage.name= verdict=transient",
			"timeout ceiling.measured=0.02 pipeline.name=fb stage.kind=ceiling stage.name=cl timeout=0.04",
			"stop pipeline.name=fb stage.kind=ceiling stage.name=cl stop.reason=deadline stop.stage.kind=ceiling stop.stage.name=cl",
			"fallback fallback.reason=deadline pipeline.name=fb stage.kind=fallback stage.name=fb",
		}, r.events("fb.B"))
		assert.Equal(t, []string{
			"fallback error.message=no spare fallback.failed=true fallback.reason=deadline pipeline.name=fb stage.kind=fallback stage.name=fb",
		}, matching(r.events("fb.C"), "fallback"))
		assert.Equal(t, []string{
			"fault attempt=1 delay=0.005 fault.kind=latency pipeline.name=ft stage.kind=fault stage.name=ft",
			"fault attempt=1 fault.kind=throttled pipeline.name=ft stage.kind=fault stage.name=ft",
		}, r.events("ft.A"))
	})
}

// TestGuardHookEdges feeds the hook what the scenario does not raise: a
// fallback chosen for a success and for a value judged a failure, a
// revision and a fault of kinds a later version may add, a revision that
// cut the limit.
func TestGuardHookEdges(t *testing.T) {
	r := newRig(t)
	hook := r.tel.Hook()
	ctx, span := r.tracer.Start(context.Background(), "call")
	fb := pipeline.Source{Pipeline: "p", Stage: "fallback", Name: "f"}
	ad := pipeline.Source{Pipeline: "p", Stage: "adaptive", Name: "a"}
	ft := pipeline.Source{Pipeline: "p", Stage: "fault", Name: "x"}

	hook(ctx, fb, fallback.Executed{})
	hook(ctx, fb, fallback.Executed{Verdict: outcome.Verdict{Kind: outcome.Transient}})
	hook(ctx, fb, fallback.Executed{Verdict: outcome.Verdict{Kind: outcome.Transient}, Err: errBoom, FuncErr: errBoom})
	hook(ctx, ad, adaptive.Revision{From: 10, To: 6, Why: adaptive.Queued, Recent: 30 * time.Millisecond, Baseline: 10 * time.Millisecond})
	hook(ctx, pipeline.Source{Pipeline: "q", Stage: "adaptive", Name: "a"}, adaptive.Revision{From: 6, To: 4, Why: adaptive.Queued})
	hook(ctx, ad, adaptive.Revision{From: 4, To: 4, Why: 200})
	hook(ctx, ft, fault.Injected{Attempt: 2, Kind: fault.Value})
	hook(ctx, ft, fault.Injected{Attempt: 3, Kind: 99})
	span.End()

	assert.Equal(t, []string{
		"resilience.adaptive.revisions{adaptive.why=queued,stage.kind=adaptive,stage.name=a} 2",
		"resilience.adaptive.revisions{adaptive.why=unknown,stage.kind=adaptive,stage.name=a} 1",
		"resilience.fallbacks{fallback.failed=true,fallback.reason=error,pipeline.name=p,stage.kind=fallback,stage.name=f} 1",
		"resilience.fallbacks{fallback.reason=error,pipeline.name=p,stage.kind=fallback,stage.name=f} 1",
		"resilience.fallbacks{fallback.reason=ok,pipeline.name=p,stage.kind=fallback,stage.name=f} 1",
		"resilience.faults{fault.kind=unknown,pipeline.name=p,stage.kind=fault,stage.name=x} 1",
		"resilience.faults{fault.kind=value,pipeline.name=p,stage.kind=fault,stage.name=x} 1",
	}, r.metrics(t), "a limiter's revisions are one series whichever pipeline ended the interval")
	assert.Equal(t, []string{
		"fallback fallback.reason=ok pipeline.name=p stage.kind=fallback stage.name=f",
		"fallback fallback.reason=error pipeline.name=p stage.kind=fallback stage.name=f",
		"fallback error.message=boom fallback.failed=true fallback.reason=error pipeline.name=p stage.kind=fallback stage.name=f",
		"adaptive.revision adaptive.baseline=0.01 adaptive.from=10 adaptive.recent=0.03 adaptive.to=6 adaptive.why=queued pipeline.name=p stage.kind=adaptive stage.name=a",
		"adaptive.revision adaptive.baseline=0 adaptive.from=6 adaptive.recent=0 adaptive.to=4 adaptive.why=queued pipeline.name=q stage.kind=adaptive stage.name=a",
		"adaptive.revision adaptive.baseline=0 adaptive.from=4 adaptive.recent=0 adaptive.to=4 adaptive.why=unknown pipeline.name=p stage.kind=adaptive stage.name=a",
		"fault attempt=2 fault.kind=value pipeline.name=p stage.kind=fault stage.name=x",
		"fault attempt=3 fault.kind=unknown pipeline.name=p stage.kind=fault stage.name=x",
	}, r.events("call"))
}

// guardEvents are an event of each kind the newer stages emit, with their
// sources.
var guardEvents = []struct {
	src pipeline.Source
	e   pipeline.Event
}{
	{pipeline.Source{Pipeline: "p", Stage: "ratelimit", Name: "r"}, pipeline.Waited{Wait: time.Millisecond}},
	{pipeline.Source{Pipeline: "p", Stage: "bulkhead", Name: "b"}, pipeline.Waited{Wait: time.Millisecond}},
	{pipeline.Source{Pipeline: "p", Stage: "adaptive", Name: "a"}, pipeline.Waited{Wait: time.Millisecond, Queued: 1, Limit: 4}},
	{pipeline.Source{Pipeline: "p", Stage: "adaptive", Name: "a"}, adaptive.Revision{From: 4, To: 6, Why: adaptive.Grew}},
	{pipeline.Source{Pipeline: "p", Stage: "fallback", Name: "f"}, fallback.Executed{Verdict: outcome.Verdict{Kind: outcome.Transient}, Err: errBoom}},
	{pipeline.Source{Pipeline: "p", Stage: "ceiling", Name: "c"}, timeout.TimedOut{Timeout: time.Second, Measured: time.Millisecond}},
	{pipeline.Source{Pipeline: "p", Stage: "fault", Name: "x"}, fault.Injected{Attempt: 1, Kind: fault.Latency, Delay: time.Millisecond}},
}

// TestGuardEventsAllocateNothing checks that the hook records the newer
// stages' events, once their attribute sets are built, without allocating
// (outside a recording span).
func TestGuardEventsAllocateNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("measures allocations")
	}
	r := newRig(t)
	hook := r.tel.Hook()
	ctx := context.Background()
	for _, g := range guardEvents {
		hook(ctx, g.src, g.e) // builds the sets
		assert.Zero(t, testing.AllocsPerRun(100, func() { hook(ctx, g.src, g.e) }), "%T", g.e)
	}
}

// TestGuardEventsLog checks the slog side of the newer stages' events: each
// says its level and logs as a group of its fields through
// pipeline.LogEvents, not as a value printed whole.
func TestGuardEventsLog(t *testing.T) {
	var buf bytes.Buffer
	logEvents := pipeline.LogEvents(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	for _, g := range guardEvents {
		require.Implements(t, (*slog.LogValuer)(nil), g.e)
		require.Implements(t, (*pipeline.Leveled)(nil), g.e)
		buf.Reset()
		logEvents(context.Background(), g.src, g.e)
		var record struct {
			Level string         `json:"level"`
			Msg   string         `json:"msg"`
			Event map[string]any `json:"event"`
		}
		require.NoError(t, json.Unmarshal(buf.Bytes(), &record), buf.String())
		assert.Equal(t, g.e.Name(), record.Msg)
		assert.Equal(t, g.e.(pipeline.Leveled).Level().String(), record.Level, "%T", g.e)
		assert.NotEmpty(t, record.Event, "%T logs its fields", g.e)
	}
}
