package fault_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/pipelinetest"
	"github.com/resilience-go/pipeline/policy/fault"
)

// The stage passes the suite off, on with no rate set, and on with latency
// injected into every call: the checks then hold the injected wait to the
// rules (it ends when the caller cancels, leaves no goroutine behind).
func TestConformance(t *testing.T) {
	for name, cfg := range map[string]fault.Config[string]{
		"Off":       {Transient: 1, Rand: panicSource{}},
		"OnNoRates": {Enabled: true, Rand: panicSource{}},
		"Latency":   {Enabled: true, Latency: 1, Delay: 3 * time.Millisecond},
	} {
		t.Run(name, func(t *testing.T) {
			pipelinetest.Run(t, func() pipeline.Policy[string] { return stage(t, cfg) }, "value")
		})
	}
}

// Each outcome fault answers in place of the work with the verdict of its
// kind, and an error matching ErrInjected.
func TestInjectsEachKind(t *testing.T) {
	for _, tc := range []struct {
		cfg     fault.Config[string]
		kind    fault.Kind
		verdict outcome.Verdict
		value   string
		msg     string
	}{
		{fault.Config[string]{Transient: 1}, fault.Transient, outcome.Verdict{Kind: outcome.Transient}, "", "fault: injected transient failure"},
		{fault.Config[string]{Throttled: 1, RetryAfter: 2 * time.Second}, fault.Throttled,
			outcome.Verdict{Kind: outcome.Throttled}.WithRetryAfter(2 * time.Second), "", "fault: injected throttled failure (retry after 2s)"},
		{fault.Config[string]{Permanent: 1}, fault.Permanent, outcome.Verdict{Kind: outcome.Permanent}, "", "fault: injected permanent failure"},
		{fault.Config[string]{Value: 1, NewValue: func() string { return "503" }, ValueVerdict: outcome.Verdict{Kind: outcome.Transient}},
			fault.Value, outcome.Verdict{Kind: outcome.Transient}, "503", ""},
		{fault.Config[string]{Value: 1}, fault.Value, outcome.Verdict{}, "", ""},
	} {
		tc.cfg.Enabled, tc.cfg.Name = true, "chaos"
		ev := &events{}
		var verdict outcome.Verdict
		ran := false
		v, err := pipeline.New(spy[string](&verdict), pipeline.Policy[string](stage(t, tc.cfg))).
			With(pipeline.Options[string]{OnEvent: ev.add}).
			Execute(t.Context(), func(context.Context) (string, error) { ran = true; return "real", nil })
		assert.False(t, ran, "%v: the work ran", tc.kind)
		assert.Equal(t, tc.value, v, tc.kind)
		assert.Equal(t, tc.verdict, verdict, tc.kind)
		assert.Equal(t, []pipeline.Event{fault.Injected{Attempt: 1, Kind: tc.kind}}, ev.list())
		if tc.msg == "" {
			assert.NoError(t, err)
			continue
		}
		assert.EqualError(t, err, tc.msg)
		assert.ErrorIs(t, err, fault.ErrInjected)
		fe, ok := errors.AsType[*fault.Error](err)
		require.True(t, ok)
		assert.Equal(t, tc.kind, fe.Kind)
	}
}

// Off, the stage draws nothing and passes every call through.
func TestOffDrawsNothing(t *testing.T) {
	p := stage(t, fault.Config[string]{Transient: 1, Latency: 1, Delay: time.Hour, Rand: panicSource{}})
	v, err := pipeline.New[string](p).Execute(t.Context(), func(context.Context) (string, error) { return "real", nil })
	require.NoError(t, err)
	assert.Equal(t, "real", v)
}

// The injected latency waits on the pipeline's clock, then the call goes on.
func TestLatencyOnThePipelinesClock(t *testing.T) {
	clock := clockwork.NewFakeClock()
	p := stage(t, fault.Config[string]{Enabled: true, Latency: 1, Delay: 5 * time.Second})
	ev := &events{}
	pl := pipeline.New[string](p).With(pipeline.Options[string]{Clock: clock, OnEvent: ev.add})
	done := make(chan string)
	go func() {
		v, _ := pl.Execute(context.Background(), func(context.Context) (string, error) { return "real", nil })
		done <- v
	}()
	require.NoError(t, clock.BlockUntilContext(t.Context(), 1))
	select {
	case v := <-done:
		t.Fatalf("returned %q before the delay", v)
	default:
	}
	clock.Advance(5 * time.Second)
	assert.Equal(t, "real", <-done)
	assert.Contains(t, ev.list(), pipeline.Event(fault.Injected{Attempt: 1, Kind: fault.Latency, Delay: 5 * time.Second}))
}

// A delay ends when the call's context does: the caller's cancellation is
// the caller's; a deadline of our own timeout is Transient, as it would be
// for slow work.
func TestLatencyHonoursTheContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := stage(t, fault.Config[string]{Enabled: true, Latency: 1, Delay: time.Hour})
		var verdict outcome.Verdict
		pl := pipeline.New(spy[string](&verdict), pipeline.Policy[string](p))

		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(time.Second, cancel)
		start := time.Now()
		_, err := pl.Execute(ctx, func(context.Context) (string, error) { return "real", nil })
		assert.Equal(t, time.Second, time.Since(start))
		assert.ErrorIs(t, err, context.Canceled)
		assert.ErrorIs(t, err, fault.ErrInjected)
		assert.True(t, verdict.Canceled)

		ours, stop := context.WithTimeoutCause(t.Context(), time.Second, outcome.ErrTimeout)
		defer stop()
		_, err = pl.Execute(ours, func(context.Context) (string, error) { return "real", nil })
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.EqualError(t, err, "fault: injected latency cut short: context deadline exceeded")
		assert.Equal(t, outcome.Verdict{Kind: outcome.Transient}, verdict)
	})
}

// Latency and an outcome fault can hit one call: the delay comes first.
func TestLatencyThenFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ev := &events{}
		p := stage(t, fault.Config[string]{Enabled: true, Latency: 1, Delay: time.Second, Transient: 1})
		start := time.Now()
		_, err := pipeline.New[string](p).With(pipeline.Options[string]{OnEvent: ev.add}).
			Execute(t.Context(), func(context.Context) (string, error) { return "real", nil })
		assert.Equal(t, time.Second, time.Since(start))
		assert.ErrorIs(t, err, fault.ErrInjected)
		assert.Equal(t, []pipeline.Event{
			fault.Injected{Attempt: 1, Kind: fault.Latency, Delay: time.Second},
			fault.Injected{Attempt: 1, Kind: fault.Transient},
		}, ev.list())
	})
}

// A draw below a fault's threshold injects it; at or above, not: the
// outcome faults partition [0, 1) in the order Transient, Throttled,
// Permanent, Value.
func TestThresholds(t *testing.T) {
	cfg := fault.Config[string]{Enabled: true, Transient: 0.25, Throttled: 0.25, Permanent: 0.25, Value: 0.25, NewValue: func() string { return "v" }}
	for _, tc := range []struct {
		draw float64
		want string
	}{
		{0, "fault: injected transient failure"},
		{0.2499, "fault: injected transient failure"},
		{0.25, "fault: injected throttled failure"},
		{0.5, "fault: injected permanent failure"},
		{0.75, "v"},
		{0.9999, "v"},
	} {
		cfg.Rand = constSource(uint64(tc.draw * math.Exp2(64)))
		v, err := pipeline.New[string](stage(t, cfg)).Execute(t.Context(), func(context.Context) (string, error) { return "real", nil })
		got := v
		if err != nil {
			got = err.Error()
		}
		assert.Equal(t, tc.want, got, "draw %v", tc.draw)
	}
	cfg = fault.Config[string]{Enabled: true, Transient: 0.5, Rand: constSource(math.MaxUint64)}
	v, err := pipeline.New[string](stage(t, cfg)).Execute(t.Context(), func(context.Context) (string, error) { return "real", nil })
	assert.NoError(t, err)
	assert.Equal(t, "real", v, "a draw above every threshold injects nothing")
}

func TestKindString(t *testing.T) {
	assert.Equal(t, "latency", fault.Latency.String())
	assert.Equal(t, "value", fault.Value.String())
	assert.Equal(t, "fault.Kind(9)", fault.Kind(9).String())
}

func TestStageInfo(t *testing.T) {
	info := pipeline.StageInfo{Kind: "fault", Name: "chaos"}
	assert.Equal(t, info, stage(t, fault.Config[string]{Name: "chaos"}).Stage())
}

// Off, on without injecting, and injecting an error: none allocates.
func TestAllocations(t *testing.T) {
	ctx, work := context.Background(), func(context.Context) (int, error) { return 1, nil }
	for name, cfg := range map[string]fault.Config[int]{
		"off":                {Transient: 1},
		"on, not injecting":  {Enabled: true, Transient: 0.5, Rand: constSource(math.MaxUint64)},
		"on, default source": {Enabled: true, Transient: math.Ldexp(1, -50)},
		"injecting an error": {Enabled: true, Transient: 1},
		"injecting a value":  {Enabled: true, Value: 1},
	} {
		p, err := fault.New(cfg)
		require.NoError(t, err)
		pl := pipeline.New[int](p)
		assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = pl.Execute(ctx, work) }), name)
	}
}
