package hedge_test

import (
	"cmp"
	"context"
	"math"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/policy/hedge"

	"github.com/resilience-go/pipeline/internal/hedgerule"
	"github.com/resilience-go/pipeline/internal/testcheck"
)

// FuzzConfig checks hedge.Config.Validate and the stage a valid Config builds,
// inside testing/synctest:
//
//   - Validate never panics, and returns nil exactly when New succeeds; each
//     of its joined errors names, as "Config.<Field>", a field the caller set
//     (a zero field means its default, so it is never to blame);
//   - with an estimator holding recorded samples of sample, Delay(now) is
//     armed exactly when recorded reaches MinSamples, and then returns the
//     estimator's Quantile, never below MinDelay;
//   - a repeatable call whose work takes work (at most 1000 h and 64 hedge
//     delays) returns the work's value, having started at most MaxAttempts
//     copies and at most one more than work/delay.
func FuzzConfig(f *testing.F) {
	for _, q := range []float64{0, 1, -1, 0.5, 0.95, math.SmallestNonzeroFloat64, 1 + 1e-15, math.Copysign(0, -1),
		math.NaN(), math.Inf(1), math.Inf(-1), math.MaxFloat64} {
		f.Add(q, int64(0), 0, 0, uint8(20), int64(time.Millisecond), int64(10*time.Millisecond))
	}
	for _, d := range []int64{0, 1, -1, int64(time.Millisecond), math.MaxInt32, math.MaxInt64, math.MinInt64} {
		f.Add(0.0, d, 1, 0, uint8(1), d, d)
		f.Add(0.5, int64(1), 1, 0, uint8(5), d, int64(time.Second))
	}
	for _, n := range []int{0, 1, -1, 2, 3, 255, 256, math.MaxInt32, math.MaxInt, math.MinInt} {
		f.Add(0.0, int64(0), n, 0, uint8(255), int64(time.Millisecond), int64(100*time.Millisecond))
		f.Add(0.0, int64(1), 1, n, uint8(1), int64(0), int64(time.Second))
	}

	f.Fuzz(func(t *testing.T, quantile float64, minDelay int64, minSamples, maxAttempts int, recorded uint8, sample, work int64) {
		synctest.Test(t, func(t *testing.T) {
			est, err := latency.New(latency.Config{})
			if err != nil {
				t.Fatal(err)
			}
			cfg := hedge.Config{
				Estimator:   est,
				Quantile:    quantile,
				MinDelay:    time.Duration(minDelay),
				MinSamples:  minSamples,
				MaxAttempts: maxAttempts,
				Repeatable:  true,
			}
			err = testcheck.Validate(t, cfg, cfg.Validate)
			p, errNew := hedge.New[int](cfg)
			if (err == nil) != (errNew == nil) {
				t.Fatalf("Validate() = %v but New returned %v for %+v", err, errNew, cfg)
			}
			if err != nil {
				testcheck.Blames(t, err, map[string]bool{
					"Config.Quantile":    quantile != 0,
					"Config.MinDelay":    minDelay != 0,
					"Config.MinSamples":  minSamples != 0,
					"Config.MaxAttempts": maxAttempts != 0,
				})
				return
			}
			for range recorded {
				est.Record(est.Now(), time.Duration(sample))
			}
			q, n := est.Quantile(est.Now(), cmp.Or(quantile, hedgerule.DefaultQuantile))
			delay, armed := hedge.RuleOf(p).Delay(est.Now())
			if armed != (int(recorded) >= cmp.Or(minSamples, hedgerule.DefaultMinSamples)) || n != int(recorded) {
				t.Fatalf("Delay armed %v with %d samples (%d held), MinSamples %d", armed, recorded, n, minSamples)
			}
			floor := cmp.Or(time.Duration(minDelay), hedgerule.DefaultMinDelay)
			if armed && delay != max(q, floor) {
				t.Fatalf("Delay() = %v, want the quantile %v but at least %v", delay, q, floor)
			}
			// Timers beyond ~292 years all saturate to the same instant, so the
			// work is kept well short of that.
			took := time.Duration(min(max(work, 0), int64(1000*time.Hour)))
			if armed && took/64 > delay {
				took = 64 * delay
			}
			var calls atomic.Int64
			v, err := pipeline.New[int](p).Execute(context.Background(), func(ctx context.Context) (int, error) {
				calls.Add(1)
				select {
				case <-time.After(took):
					return 1, nil
				case <-ctx.Done():
					return 0, ctx.Err()
				}
			})
			copies := int(calls.Load())
			if v != 1 || err != nil || copies < 1 || copies > cmp.Or(maxAttempts, hedgerule.DefaultMaxAttempts) ||
				(!armed && copies != 1) || (armed && copies > 1+int(took/delay)) {
				t.Fatalf("work of %v, hedge delay %v (armed %v): %d, %v after %d copies", took, delay, armed, v, err, copies)
			}
		})
	})
}
