package bench_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"golang.org/x/time/rate"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/bench"
)

// The limit benchmarks: the rate limiter, the bulkhead and the adaptive limit
// on their success path (never refusing), alone, next to the peers; and
// under RunParallel, where the shared state is contended. Run them with
//
//	go test -run XXX -bench 'Limit|Bulkhead' -benchmem -count 5

// runParallelOurs benchmarks one of our pipelines from GOMAXPROCS goroutines.
func runParallelOurs(b *testing.B, pl *pipeline.Pipeline[int]) {
	ctx, fn := context.Background(), bench.OursWork(bench.OK)
	checkOnce(b, bench.OK, func() (int, error) { return pl.Execute(ctx, fn) })
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := pl.Execute(ctx, fn); err != nil {
				b.Errorf("unexpected error %v", err)
				return
			}
		}
	})
}

// runParallelFailsafe benchmarks a failsafe-go executor from GOMAXPROCS
// goroutines.
func runParallelFailsafe(b *testing.B, ex failsafe.Executor[int]) {
	fn := bench.PeerWork(bench.OK)
	checkOnce(b, bench.OK, func() (int, error) { return ex.Get(fn) })
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := ex.Get(fn); err != nil {
				b.Errorf("unexpected error %v", err)
				return
			}
		}
	})
}

// runParallel benchmarks call from GOMAXPROCS goroutines.
func runParallel(b *testing.B, call func() (int, error)) {
	checkOnce(b, bench.OK, call)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := call(); err != nil {
				b.Errorf("unexpected error %v", err)
				return
			}
		}
	})
}

// run benchmarks call on one goroutine.
func run(b *testing.B, call func() (int, error)) {
	checkOnce(b, bench.OK, call)
	b.ReportAllocs()
	for b.Loop() {
		v, err := call()
		check(b, bench.OK, err)
		sinkInt = v
	}
}

// xrateCall is the work behind x/time/rate's Allow, by hand.
func xrateCall(refusing bool) func() (int, error) {
	l, fn := bench.XRate(refusing), bench.PeerWork(bench.OK)
	return func() (int, error) {
		if !l.Allow() {
			return 0, bench.ErrRefused
		}
		return fn()
	}
}

// BenchmarkRateLimit is a rate limiter with tokens to spare: ours as a stage;
// x/time/rate's Allow by hand ("xrate") and made a stage ("xstage", the
// target: Allow plus one stage's overhead); failsafe-go's smooth limiter.
func BenchmarkRateLimit(b *testing.B) {
	b.Run("ok/ours", func(b *testing.B) { runOurs(b, bench.OK, bench.OursRateLimit()) })
	b.Run("ok/xstage", func(b *testing.B) { runOurs(b, bench.OK, bench.XRateStage()) })
	b.Run("ok/xrate", func(b *testing.B) { run(b, xrateCall(false)) })
	b.Run("ok/failsafe", func(b *testing.B) { runFailsafe(b, bench.OK, bench.FailsafeRateLimit(false)) })
}

// BenchmarkRateLimitParallel is the same limiters shared by GOMAXPROCS
// goroutines.
func BenchmarkRateLimitParallel(b *testing.B) {
	b.Run("ok/ours", func(b *testing.B) { runParallelOurs(b, bench.OursRateLimit()) })
	b.Run("ok/xstage", func(b *testing.B) { runParallelOurs(b, bench.XRateStage()) })
	b.Run("ok/xrate", func(b *testing.B) { runParallel(b, xrateCall(false)) })
	b.Run("ok/failsafe", func(b *testing.B) { runParallelFailsafe(b, bench.FailsafeRateLimit(false)) })
}

// BenchmarkRateLimitRefused is a limiter with no token for the next hour:
// what shedding a call costs.
func BenchmarkRateLimitRefused(b *testing.B) {
	b.Run("refused/ours", func(b *testing.B) { runRefused(b, bench.OursRateLimitRefusing().Execute) })
	b.Run("refused/xrate", func(b *testing.B) {
		call := xrateCall(true)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := call(); err == nil {
				b.Fatal("not refused")
			}
		}
	})
	b.Run("refused/failsafe", func(b *testing.B) {
		ex, fn := bench.FailsafeRateLimit(true), bench.PeerWork(bench.OK)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ex.Get(fn); err == nil {
				b.Fatal("not refused")
			}
		}
	})
}

// semaphoreCall is the work in a slot of a buffered-channel semaphore.
func semaphoreCall() func() (int, error) {
	s, fn := make(bench.Semaphore, bench.OpenSlots), bench.PeerWork(bench.OK)
	return func() (int, error) { return s.Call(fn) }
}

// BenchmarkBulkhead is a bulkhead with slots to spare: ours as a stage; a
// buffered-channel semaphore by hand ("chan", the target under
// RunParallel); failsafe-go's bulkhead.
func BenchmarkBulkhead(b *testing.B) {
	b.Run("ok/ours", func(b *testing.B) { runOurs(b, bench.OK, bench.OursBulkhead()) })
	b.Run("ok/chan", func(b *testing.B) { run(b, semaphoreCall()) })
	b.Run("ok/failsafe", func(b *testing.B) { runFailsafe(b, bench.OK, bench.FailsafeBulkhead()) })
}

// BenchmarkBulkheadParallel is the same bulkheads shared by GOMAXPROCS
// goroutines.
func BenchmarkBulkheadParallel(b *testing.B) {
	b.Run("ok/ours", func(b *testing.B) { runParallelOurs(b, bench.OursBulkhead()) })
	b.Run("ok/chan", func(b *testing.B) { runParallel(b, semaphoreCall()) })
	b.Run("ok/failsafe", func(b *testing.B) { runParallelFailsafe(b, bench.FailsafeBulkhead()) })
}

// BenchmarkAdaptiveLimit is an adaptive concurrency limit with its defaults,
// ours and failsafe-go's, on calls that take no time: the limit is never
// reached.
func BenchmarkAdaptiveLimit(b *testing.B) {
	b.Run("ok/ours", func(b *testing.B) { runOurs(b, bench.OK, bench.OursAdaptive()) })
	b.Run("ok/failsafe", func(b *testing.B) { runFailsafe(b, bench.OK, bench.FailsafeAdaptive()) })
}

// BenchmarkAdaptiveLimitParallel is the same limits shared by GOMAXPROCS
// goroutines.
func BenchmarkAdaptiveLimitParallel(b *testing.B) {
	b.Run("ok/ours", func(b *testing.B) { runParallelOurs(b, bench.OursAdaptive()) })
	b.Run("ok/failsafe", func(b *testing.B) { runParallelFailsafe(b, bench.FailsafeAdaptive()) })
}

// TestXRateCreditsStaleReadings replays, on golang.org/x/time/rate, the
// schedule that docs/ratelimit.md cites as a reason not to build on it: a
// third of the calls read the clock up to 200 ms before they reach the
// limiter (a goroutine descheduled between time.Now and the lock), at about
// 10 calls a second against a limit of 10 a second with bursts of 1 to 5.
// Counted by when the calls really reached it, the limiter admits more than
// Rate × t + Burst in some stretch t: a stale reading moves its clock back and
// the next call is credited the same tokens again. Our limiter reads its
// clock after loading its state, so no reading can be older than the state's
// last change, and its model test (policy/ratelimit, TestBucketMatchesModel)
// holds the bound exactly. If this test fails, x/time/rate has changed: update
// the documentation.
func TestXRateCreditsStaleReadings(t *testing.T) {
	t0 := time.Unix(1000, 0)
	worst, at := 0.0, ""
	for seed := uint64(0); seed < 2000; seed++ {
		r := rand.New(rand.NewPCG(seed, 1))
		const limit = 10.0
		burst := 1 + r.IntN(5)
		lim := rate.NewLimiter(rate.Limit(limit), burst)
		var admitted []time.Duration // when each admitted call really reached the limiter
		now := time.Duration(0)
		for range 300 {
			now += time.Duration(r.IntN(60)) * time.Millisecond
			read := now
			if r.IntN(3) == 0 {
				read -= time.Duration(r.IntN(200)) * time.Millisecond
			}
			if lim.AllowN(t0.Add(read), 1) {
				admitted = append(admitted, now)
			}
		}
		for i := range admitted {
			for j := i; j < len(admitted); j++ {
				span := (admitted[j] - admitted[i]).Seconds()
				if excess := float64(j-i+1) - (limit*span + float64(burst)); excess > worst {
					worst = excess
					at = fmt.Sprintf("seed %d, burst %d: %d admitted within %.2f s, bound %.1f", seed, burst, j-i+1, span, limit*span+float64(burst))
				}
			}
		}
	}
	t.Logf("worst: %s", at)
	if worst < 1 {
		t.Fatalf("x/time/rate kept the bound on stale readings (worst excess %.2f): update docs/ratelimit.md", worst)
	}
}
