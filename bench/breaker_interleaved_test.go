package bench_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/resilience-go/pipeline/bench"
)

// BenchmarkBreakerInterleaved runs our breaker (its stage, alone in a
// pipeline) and gobreaker on the success path in turns, so that a slow spell
// of a shared machine falls on both alike: alone, one goroutine calling; and
// shared, GOMAXPROCS goroutines calling one breaker at once, as
// BenchmarkBreakerParallel does. Each reports the wall time per call of each
// (calls made at once by several goroutines count each, as RunParallel's
// ns/op does) and ours over gobreaker's (ratio):
//
//	cd bench && go test -run '^$' -bench BreakerInterleaved -count 8
func BenchmarkBreakerInterleaved(b *testing.B) {
	ours, cb := bench.OursBreaker(bench.OK), bench.GoBreaker(bench.OK)
	ctx, fn, peer := context.Background(), bench.OursWork(bench.OK), bench.PeerWork(bench.OK)
	callOurs := func() {
		if _, err := ours.Execute(ctx, fn); err != nil {
			panic(err)
		}
	}
	callPeer := func() {
		if _, err := cb.Execute(peer); err != nil {
			panic(err)
		}
	}
	b.Run("alone", func(b *testing.B) { inTurns(b, 1, callOurs, callPeer) })
	b.Run("shared", func(b *testing.B) { inTurns(b, runtime.GOMAXPROCS(0), callOurs, callPeer) })
}

// inTurns runs ours and then peer, in turns of 1024 calls on each of g
// goroutines at once, and reports the wall time per call of each and their
// ratio.
func inTurns(b *testing.B, g int, ours, peer func()) {
	const turn = 1024
	var spent [2]time.Duration
	calls := 0
	for b.Loop() {
		for i, call := range []func(){ours, peer} {
			start := time.Now()
			var wg sync.WaitGroup
			for range g {
				wg.Go(func() {
					for range turn {
						call()
					}
				})
			}
			wg.Wait()
			spent[i] += time.Since(start)
		}
		calls += turn * g
	}
	b.ReportMetric(float64(spent[0])/float64(calls), "ours-ns/call")
	b.ReportMetric(float64(spent[1])/float64(calls), "gobreaker-ns/call")
	b.ReportMetric(float64(spent[0])/float64(spent[1]), "ratio")
}
