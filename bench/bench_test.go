package bench_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/sony/gobreaker/v2"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/bench"
)

// The benchmarks are named Benchmark<Composition>/<path>/<library>, so that the
// rows of one composition line up: the report compares each "ours" row with the
// other rows of its composition and path, and with the floor of its composition.

var (
	sinkInt  int
	sinkTime time.Time
)

// check fails the benchmark if err is not what path p should produce. It is
// cheap enough to run on every iteration.
func check(b *testing.B, p bench.Path, err error) {
	if (err == nil) != (p == bench.OK) {
		b.Fatalf("path %v: unexpected error %v", p, err)
	}
}

// checkOnce runs call once, before the timed loop, and checks its error fully:
// on the failing path it must wrap the work's error. errors.Is is kept out of
// the loop because it costs (and, on our StopError, allocates) per call.
func checkOnce(b *testing.B, p bench.Path, call func() (int, error)) {
	_, err := call()
	check(b, p, err)
	if err != nil && !errors.Is(err, bench.ErrUnavailable) {
		b.Fatalf("path %v: error %v does not wrap the work's error", p, err)
	}
}

// runOurs benchmarks one of our pipelines on path p.
func runOurs(b *testing.B, p bench.Path, pl *pipeline.Pipeline[int]) {
	ctx, fn := context.Background(), bench.OursWork(p)
	checkOnce(b, p, func() (int, error) { return pl.Execute(ctx, fn) })
	b.ReportAllocs()
	for b.Loop() {
		v, err := pl.Execute(ctx, fn)
		check(b, p, err)
		sinkInt = v
	}
}

// runFailsafe benchmarks a failsafe-go executor on path p.
func runFailsafe(b *testing.B, p bench.Path, ex failsafe.Executor[int]) {
	fn := bench.PeerWork(p)
	checkOnce(b, p, func() (int, error) { return ex.Get(fn) })
	b.ReportAllocs()
	for b.Loop() {
		v, err := ex.Get(fn)
		check(b, p, err)
		sinkInt = v
	}
}

// runGoBreaker benchmarks a gobreaker on path p.
func runGoBreaker(b *testing.B, p bench.Path, cb *gobreaker.CircuitBreaker[int]) {
	fn := bench.PeerWork(p)
	checkOnce(b, p, func() (int, error) { return cb.Execute(fn) })
	b.ReportAllocs()
	for b.Loop() {
		v, err := cb.Execute(fn)
		check(b, p, err)
		sinkInt = v
	}
}

// BenchmarkFloor measures the primitives that bound what any library can reach:
// a bare call of the work, one clock read, an uncontended mutex, a context with a
// timeout created and canceled, and a goroutine started and waited for.
func BenchmarkFloor(b *testing.B) {
	b.Run("call", func(b *testing.B) {
		fn := bench.OursWork(bench.OK)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			v, err := fn(ctx)
			if err != nil {
				b.Fatal(err)
			}
			sinkInt = v
		}
	})
	b.Run("now", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sinkTime = time.Now()
		}
	})
	b.Run("mutex", func(b *testing.B) {
		var mu sync.Mutex
		b.ReportAllocs()
		for b.Loop() {
			mu.Lock()
			sinkInt++
			mu.Unlock()
		}
	})
	b.Run("withtimeout", func(b *testing.B) {
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			c, cancel := context.WithTimeout(ctx, bench.Timeout)
			cancel()
			if c.Err() == nil {
				b.Fatal("context not canceled")
			}
		}
	})
	b.Run("goroutine", func(b *testing.B) {
		done := make(chan struct{}, 1)
		run := func() { done <- struct{}{} }
		b.ReportAllocs()
		for b.Loop() {
			go run()
			<-done
		}
	})
	// guard is what a guarded timeout must do at least, and a cooperative one
	// need not: hand the work to a goroutine and wait for it or for the end of
	// the timeout's context, whichever comes first.
	b.Run("guard", func(b *testing.B) {
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			c, cancel := context.WithTimeout(ctx, bench.Timeout)
			done := make(chan struct{})
			go func() { close(done) }()
			select {
			case <-done:
			case <-c.Done():
			}
			cancel()
		}
	})
}

// BenchmarkEmpty is a composition with no policies: the cost of executing
// through the library at all.
func BenchmarkEmpty(b *testing.B) {
	b.Run("ok/ours", func(b *testing.B) { runOurs(b, bench.OK, bench.OursEmpty()) })
	b.Run("ok/failsafe", func(b *testing.B) { runFailsafe(b, bench.OK, bench.FailsafeEmpty()) })
}

// BenchmarkBreaker is a circuit breaker alone.
func BenchmarkBreaker(b *testing.B) {
	for _, p := range bench.Paths {
		b.Run(p.String()+"/ours", func(b *testing.B) { runOurs(b, p, bench.OursBreaker(p)) })
		b.Run(p.String()+"/gobreaker", func(b *testing.B) { runGoBreaker(b, p, bench.GoBreaker(p)) })
		b.Run(p.String()+"/failsafe", func(b *testing.B) { runFailsafe(b, p, bench.FailsafeBreaker(p)) })
	}
}

// BenchmarkBreakerParallel is one breaker shared by GOMAXPROCS goroutines.
func BenchmarkBreakerParallel(b *testing.B) {
	for _, p := range bench.Paths {
		b.Run(p.String()+"/ours", func(b *testing.B) {
			pl, ctx, fn := bench.OursBreaker(p), context.Background(), bench.OursWork(p)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := pl.Execute(ctx, fn); (err == nil) != (p == bench.OK) {
						b.Errorf("path %v: unexpected error %v", p, err)
						return
					}
				}
			})
		})
		b.Run(p.String()+"/gobreaker", func(b *testing.B) {
			cb, fn := bench.GoBreaker(p), bench.PeerWork(p)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := cb.Execute(fn); (err == nil) != (p == bench.OK) {
						b.Errorf("path %v: unexpected error %v", p, err)
						return
					}
				}
			})
		})
		b.Run(p.String()+"/failsafe", func(b *testing.B) {
			ex, fn := bench.FailsafeBreaker(p), bench.PeerWork(p)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := ex.Get(fn); (err == nil) != (p == bench.OK) {
						b.Errorf("path %v: unexpected error %v", p, err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkRetryBreaker is a retry paid for by a budget, around a breaker.
func BenchmarkRetryBreaker(b *testing.B) {
	for _, p := range bench.Paths {
		b.Run(p.String()+"/ours", func(b *testing.B) { runOurs(b, p, bench.OursRetryBreaker(p)) })
		b.Run(p.String()+"/failsafe", func(b *testing.B) { runFailsafe(b, p, bench.FailsafeRetryBreaker(p)) })
	}
}

// BenchmarkCard is the card order without the hedge: timeout, retry with a
// budget, breaker, with our defaults (the timeout trusts the work to honour its
// context, as failsafe-go's does).
func BenchmarkCard(b *testing.B) {
	for _, p := range bench.Paths {
		b.Run(p.String()+"/ours", func(b *testing.B) { runOurs(b, p, bench.OursCard(p)) })
		b.Run(p.String()+"/failsafe", func(b *testing.B) { runFailsafe(b, p, bench.FailsafeCard(p)) })
	}
}

// BenchmarkCardGuarded is the card with our timeout's opt-in guard against
// work that ignores its context; failsafe-go has no such guard.
func BenchmarkCardGuarded(b *testing.B) {
	for _, p := range bench.Paths {
		b.Run(p.String()+"/ours", func(b *testing.B) { runOurs(b, p, bench.OursCardGuarded(p)) })
		b.Run(p.String()+"/failsafe", func(b *testing.B) { runFailsafe(b, p, bench.FailsafeCard(p)) })
	}
}

// BenchmarkCardHedged is the full card with a hedge that is armed on every call
// and never fires.
func BenchmarkCardHedged(b *testing.B) {
	for _, p := range bench.Paths {
		b.Run(p.String()+"/ours", func(b *testing.B) { runOurs(b, p, bench.OursCardHedged(p)) })
		b.Run(p.String()+"/failsafe", func(b *testing.B) { runFailsafe(b, p, bench.FailsafeCardHedged(p)) })
	}
}

// BenchmarkCardHedgedGuarded is the hedged card with our timeout's guard.
func BenchmarkCardHedgedGuarded(b *testing.B) {
	for _, p := range bench.Paths {
		b.Run(p.String()+"/ours", func(b *testing.B) { runOurs(b, p, bench.OursCardHedgedGuarded(p)) })
		b.Run(p.String()+"/failsafe", func(b *testing.B) { runFailsafe(b, p, bench.FailsafeCardHedged(p)) })
	}
}

// BenchmarkRefusal is a call refused by an open breaker through retry and
// breaker: the work never runs. It is a path of its own ("open"), compared with
// our success path through the same stages (RetryBreaker/ok).
func BenchmarkRefusal(b *testing.B) {
	b.Run("open/ours", func(b *testing.B) { runRefused(b, bench.OursRefusal().Execute) })
	b.Run("open/failsafe", func(b *testing.B) {
		ex := bench.FailsafeRefusal()
		fn := bench.PeerWork(bench.OK)
		runRefused(b, func(context.Context, pipeline.Func[int]) (int, error) { return ex.Get(fn) })
	})
}

// runRefused benchmarks execute, which must refuse every call.
func runRefused(b *testing.B, execute func(context.Context, pipeline.Func[int]) (int, error)) {
	ctx, fn := context.Background(), bench.OursWork(bench.OK)
	if _, err := execute(ctx, fn); err == nil {
		b.Fatal("the call was not refused")
	}
	b.ReportAllocs()
	for b.Loop() {
		_, err := execute(ctx, fn)
		if err == nil {
			b.Fatal("the call was not refused")
		}
	}
}
