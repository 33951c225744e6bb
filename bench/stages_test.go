package bench_test

// BenchmarkFallback, BenchmarkCeiling, BenchmarkFault: the stages of issue
// #15 alone, each next to the nearest thing a peer offers, named
// Benchmark<Stage>/<path>/<library> like the compositions of bench_test.go.
// The compositions are here rather than in compose.go, since only these
// benchmarks use them.

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	fsfallback "github.com/failsafe-go/failsafe-go/fallback"
	fstimeout "github.com/failsafe-go/failsafe-go/timeout"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/bench"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/policy/ceiling"
	"github.com/resilience-go/pipeline/policy/fallback"
	"github.com/resilience-go/pipeline/policy/fault"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// fallbackValue is what every fallback answers with.
const fallbackValue = 2

// runAnswered benchmarks call, which must return want and no error on every
// iteration.
func runAnswered(b *testing.B, want int, call func() (int, error)) {
	b.ReportAllocs()
	for b.Loop() {
		v, err := call()
		if err != nil || v != want {
			b.Fatalf("got (%d, %v), want (%d, nil)", v, err, want)
		}
		sinkInt = v
	}
}

// BenchmarkFallback is a fallback alone. On the ok path the work succeeds and
// the fallback is never called; on the fail path every attempt fails with
// bench.ErrUnavailable and the fallback answers in its place. failsafe-go's
// peer is fallback.NewWithResult, which handles every error by default, as
// ours (fallback.Failed) does.
func BenchmarkFallback(b *testing.B) {
	ours := pipeline.New[int](stageOf(fallback.New(fallback.Config[int]{
		Func: func(context.Context, pipeline.Result[int]) (int, error) { return fallbackValue, nil },
	})))
	peer := failsafe.With[int](fsfallback.NewWithResult[int](fallbackValue)).WithContext(context.Background())
	ctx := context.Background()
	for _, p := range bench.Paths {
		want := 1
		if p == bench.Failing {
			want = fallbackValue
		}
		b.Run(p.String()+"/ours", func(b *testing.B) {
			fn := bench.OursWork(p)
			runAnswered(b, want, func() (int, error) { return ours.Execute(ctx, fn) })
		})
		b.Run(p.String()+"/failsafe", func(b *testing.B) {
			fn := bench.PeerWork(p)
			runAnswered(b, want, func() (int, error) { return peer.Get(fn) })
		})
	}
}

// ceilingLimit is the armed ceiling of these benchmarks: the default floor,
// since the work takes nanoseconds. The fixed timeouts it is compared with
// use it too.
const ceilingLimit = 250 * time.Millisecond // the ceiling's default Floor

// BenchmarkCeiling is a ceiling stage alone, on the success path. cold: the
// stage is unarmed (its MinSamples is never reached) and passes each attempt
// through, recording its duration. armed: the estimator holds the samples the
// stage needs, and each attempt runs under a context with the ceiling (the
// 250 ms floor); the attempt's duration is recorded too. No peer measures its
// own per-attempt limit, so the armed ceiling is compared with the fixed
// timeouts it replaces, set to the same limit: our timeout stage ("timeout")
// and failsafe-go's timeout ("failsafe").
func BenchmarkCeiling(b *testing.B) {
	ctx, fn := context.Background(), bench.OursWork(bench.OK)
	b.Run("cold/ours", func(b *testing.B) {
		pl := pipeline.New[int](stageOf(ceiling.New[int](ceiling.Config{MinSamples: math.MaxInt})))
		runAnswered(b, 1, func() (int, error) { return pl.Execute(ctx, fn) })
	})
	b.Run("armed/ours", func(b *testing.B) {
		est := stageOf(latency.New(latency.Config{}))
		for range 50 { // the ceiling's default MinSamples
			est.Record(est.Now(), time.Microsecond)
		}
		c := stageOf(ceiling.New[int](ceiling.Config{Estimator: est}))
		if limit, armed := c.Limit(est.Now()); !armed || limit != ceilingLimit {
			b.Fatalf("the ceiling is %v (armed: %v), want %v", limit, armed, ceilingLimit)
		}
		pl := pipeline.New[int](c)
		runAnswered(b, 1, func() (int, error) { return pl.Execute(ctx, fn) })
	})
	b.Run("armed/timeout", func(b *testing.B) {
		pl := pipeline.New[int](stageOf(timeout.New[int](timeout.Config{Timeout: ceilingLimit})))
		runAnswered(b, 1, func() (int, error) { return pl.Execute(ctx, fn) })
	})
	b.Run("armed/failsafe", func(b *testing.B) {
		ex := failsafe.With[int](fstimeout.New[int](ceilingLimit)).WithContext(context.Background())
		peer := bench.PeerWork(bench.OK)
		runAnswered(b, 1, func() (int, error) { return ex.Get(peer) })
	})
}

// neverSource is a random source whose every draw is above any rate below 1,
// so that an enabled fault stage draws on every call and never injects.
type neverSource struct{}

func (neverSource) Uint64() uint64 { return math.MaxUint64 }

// BenchmarkFault is a fault-injection stage alone. off: disabled, with rates
// set. on: enabled, drawing from math/rand/v2's generator on every call at a
// rate so small (2^-50, about 1e-15) that nothing is injected in any run. seeded: the same,
// drawing from a source of the caller's (behind the stage's mutex) that never
// injects. inject: every call gets an injected Transient error instead of
// running the work. failsafe-go has no fault injection, so there is no peer.
func BenchmarkFault(b *testing.B) {
	ctx, fn := context.Background(), bench.OursWork(bench.OK)
	for _, tc := range []struct {
		path string
		cfg  fault.Config[int]
	}{
		{"off", fault.Config[int]{Transient: 0.5, Latency: 0.5, Delay: time.Second}},
		{"on", fault.Config[int]{Enabled: true, Transient: math.Ldexp(1, -50)}},
		{"seeded", fault.Config[int]{Enabled: true, Transient: 0.5, Rand: neverSource{}}},
		{"inject", fault.Config[int]{Enabled: true, Transient: 1}},
	} {
		b.Run(tc.path+"/ours", func(b *testing.B) {
			pl := pipeline.New[int](stageOf(fault.New(tc.cfg)))
			if tc.path != "inject" {
				runAnswered(b, 1, func() (int, error) { return pl.Execute(ctx, fn) })
				return
			}
			b.ReportAllocs()
			for b.Loop() {
				v, err := pl.Execute(ctx, fn)
				if err == nil {
					b.Fatal("no fault was injected")
				}
				sinkInt = v
			}
		})
	}
}

// stageOf returns v, or panics with err: the configurations here are fixed,
// so an error is a bug in the harness. (Named apart from the other files'
// helpers, which other work may change.)
func stageOf[V any](v V, err error) V {
	if err != nil {
		panic(err)
	}
	return v
}
