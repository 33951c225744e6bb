package retry_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/retry"

	"github.com/resilience-go/pipeline/internal/retryrule"
	"github.com/resilience-go/pipeline/internal/testcheck"
)

// extremeDurations are the seeds of every duration field.
var extremeDurations = []int64{
	0, 1, -1, int64(time.Millisecond), int64(time.Second), int64(retry.DefaultMaxDelay),
	math.MaxInt32, math.MaxInt64, math.MinInt64,
}

// extremeFactors are the seeds of Exponential.Factor.
var extremeFactors = []float64{
	0, 1, -1, 2, 1 - 1e-16, 1 + 1e-15, math.SmallestNonzeroFloat64, 1e300, math.MaxFloat64,
	math.MaxInt64, math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1),
}

// FuzzExponential checks retry.Exponential's Validate and Delay:
//
//   - Validate never panics; its error names, as "Exponential.<Field>", a field
//     the caller set; Config{Backoff: e} validates and New builds a stage
//     exactly when e validates;
//   - for a valid e, transient and throttled, for attempts 2..10 and the fuzzed
//     attempt: Nominal starts at the base (to a float64 ulp), never decreases from one attempt to
//     the next, and stays within [0, Max] whatever Factor and Base (no
//     overflow); Delay is Nominal jittered: within [0, Nominal] for FullJitter,
//     [Nominal - Nominal/2, Nominal] for EqualJitter, Nominal for NoJitter;
//   - with a retry-after hint, Delay is the hint as the verdict carries it,
//     capped at Max, without jitter.
func FuzzExponential(f *testing.F) {
	for _, d := range extremeDurations {
		f.Add(d, int64(0), int64(0), 0.0, uint8(0), 3, int64(time.Second), uint64(1))
		f.Add(int64(0), d, int64(0), 0.0, uint8(1), 3, int64(0), uint64(2))
		f.Add(int64(0), int64(0), d, 0.0, uint8(2), 3, d, uint64(3))
		f.Add(d, d, d, 1e300, uint8(2), math.MaxInt, d, uint64(4))
	}
	for _, x := range extremeFactors {
		f.Add(int64(0), int64(0), int64(0), x, uint8(2), 10, int64(0), uint64(5))
		f.Add(int64(1), int64(1), int64(math.MaxInt64), x, uint8(2), math.MaxInt32, int64(0), uint64(6))
	}
	for _, n := range []int{0, 1, -1, 2, 64, math.MaxInt32, math.MaxInt, math.MinInt} {
		f.Add(int64(0), int64(0), int64(0), 0.0, uint8(3), n, int64(math.MaxInt64), uint64(7))
	}
	f.Add(int64(0), int64(0), int64(0), 0.0, uint8(255), 2, int64(math.MinInt64), uint64(0))

	f.Fuzz(func(t *testing.T, base, throttledBase, maxDelay int64, factor float64, jitter uint8, attempt int, hint int64, seed uint64) {
		e := retry.Exponential{
			Base:          time.Duration(base),
			ThrottledBase: time.Duration(throttledBase),
			Factor:        factor,
			Max:           time.Duration(maxDelay),
			Jitter:        retry.Jitter(jitter),
		}
		err := testcheck.Validate(t, e, e.Validate)
		checkConfig(t, err, e)
		if err != nil {
			testcheck.Blames(t, err, map[string]bool{
				"Exponential.Base":          base != 0,
				"Exponential.ThrottledBase": throttledBase != 0,
				"Exponential.Factor":        factor != 0,
				"Exponential.Max":           maxDelay != 0,
				"Exponential.Jitter":        jitter != 0,
			})
			return
		}
		limit := orDefault(e.Max, retry.DefaultMaxDelay)
		src := rand.NewPCG(seed, seed)
		for _, k := range []outcome.Kind{outcome.Transient, outcome.Throttled} {
			want := orDefault(e.Base, retry.DefaultBase)
			if k == outcome.Throttled {
				want = orDefault(e.ThrottledBase, retry.DefaultThrottledBase)
			}
			// Nominal computes in float64: a base beyond 2^53 ns (104 days) is
			// off by up to one float64 ulp, a base near MaxInt64 may read as Max.
			if got := e.Nominal(2, k); got-want > want>>52 || want-got > want>>52 {
				t.Fatalf("Nominal(2, %v) = %v, want the base %v", k, got, want)
			}
			prev := time.Duration(0)
			for n := 2; n <= 10; n++ {
				nominal := e.Nominal(n, k)
				if nominal < prev || nominal > limit {
					t.Fatalf("Nominal(%d, %v) = %v after %v, Max %v", n, k, nominal, prev, limit)
				}
				prev = nominal
				checkJittered(t, e.Jitter, e.Delay(n, outcome.Verdict{Kind: k}, src), nominal)
			}
			nominal := e.Nominal(attempt, k)
			if nominal < 0 || nominal > limit {
				t.Fatalf("Nominal(%d, %v) = %v, Max %v", attempt, k, nominal, limit)
			}
			checkJittered(t, e.Jitter, e.Delay(attempt, outcome.Verdict{Kind: k}, src), nominal)
			checkHint(t, e, k, time.Duration(hint), limit, src)
		}
	})
}

// FuzzConstant checks retry.Constant's Validate and Delay, with the properties
// of [FuzzExponential] for a nominal delay that is always Interval.
func FuzzConstant(f *testing.F) {
	for _, d := range extremeDurations {
		f.Add(d, int64(0), uint8(0), int64(time.Second), uint64(1))
		f.Add(int64(0), d, uint8(1), d, uint64(2))
		f.Add(d, d, uint8(2), int64(math.MaxInt64), uint64(3))
		f.Add(int64(1), d, uint8(3), int64(-1), uint64(4))
	}

	f.Fuzz(func(t *testing.T, interval, maxDelay int64, jitter uint8, hint int64, seed uint64) {
		c := retry.Constant{Interval: time.Duration(interval), Max: time.Duration(maxDelay), Jitter: retry.Jitter(jitter)}
		err := testcheck.Validate(t, c, c.Validate)
		checkConfig(t, err, c)
		if err != nil {
			testcheck.Blames(t, err, map[string]bool{
				"Constant.Interval": interval != 0,
				"Constant.Max":      maxDelay != 0,
				"Constant.Jitter":   jitter != 0,
			})
			return
		}
		limit := orDefault(c.Max, retry.DefaultMaxDelay)
		nominal := orDefault(c.Interval, retry.DefaultBase)
		src := rand.NewPCG(seed, seed)
		for _, k := range []outcome.Kind{outcome.Transient, outcome.Throttled} {
			for n := 2; n <= 10; n++ {
				checkJittered(t, c.Jitter, c.Delay(n, outcome.Verdict{Kind: k}, src), nominal)
			}
			checkHint(t, c, k, time.Duration(hint), limit, src)
		}
	})
}

// FuzzConfig checks retry.Config.Validate, with an Exponential backoff or a nil
// BackoffFunc, and the stage a valid Config builds:
//
//   - Validate never panics, and returns nil exactly when New succeeds; its
//     error names, as "Config.<Field>" or "Exponential.<Field>", a field the
//     caller set;
//   - inside testing/synctest, a call that fails fails%4 times (Transient, or
//     Throttled with the hint when hint > 0) and then succeeds, under a
//     deadline of deadline when it is positive, either succeeds after fails+1
//     attempts, or stops with a *pipeline.StopError: AttemptsExhausted after
//     MaxAttempts attempts, or Deadline or HintBeyondDeadline only under a
//     deadline, which it never sleeps past; and it never waits more than Max
//     per retry.
func FuzzConfig(f *testing.F) {
	for _, n := range []int{0, 1, -1, 2, 4, math.MaxInt32, math.MaxInt, math.MinInt} {
		f.Add(n, int64(0), false, int64(0), int64(0), 0.0, uint8(3), int64(0), int64(0))
		f.Add(n, int64(0), false, int64(1), int64(math.MaxInt64), 1e300, uint8(3), int64(0), int64(time.Hour))
	}
	for _, d := range extremeDurations {
		f.Add(0, d, false, int64(0), int64(0), 0.0, uint8(1), int64(0), int64(0))
		f.Add(4, int64(0), false, d, d, 2.0, uint8(3), d, d)
		f.Add(4, int64(0), false, int64(0), int64(0), 0.0, uint8(3), d, int64(time.Minute))
	}
	f.Add(0, int64(0), true, int64(0), int64(0), 0.0, uint8(0), int64(0), int64(0))
	f.Add(0, int64(0), false, int64(0), int64(0), math.NaN(), uint8(0), int64(0), int64(0))

	f.Fuzz(func(t *testing.T, maxAttempts int, pause int64, nilFunc bool, base, maxDelay int64, factor float64, fails uint8, hint, deadline int64) {
		backoff := retry.Exponential{Base: time.Duration(base), Max: time.Duration(maxDelay), Factor: factor, Jitter: retry.NoJitter}
		cfg := retry.Config{MaxAttempts: maxAttempts, RefusalPause: time.Duration(pause), Backoff: backoff}
		if nilFunc {
			cfg.Backoff = retry.BackoffFunc(nil)
		}
		err := testcheck.Validate(t, cfg, cfg.Validate)
		stage, errNew := retry.New[int](cfg)
		if (err == nil) != (errNew == nil) {
			t.Fatalf("Validate() = %v but New returned %v for %+v", err, errNew, cfg)
		}
		if err != nil {
			testcheck.Blames(t, err, map[string]bool{
				"Config.MaxAttempts":  maxAttempts != 0,
				"Config.RefusalPause": pause != 0,
				"Config.Backoff":      nilFunc,
				"Exponential.Base":    !nilFunc && base != 0,
				"Exponential.Max":     !nilFunc && maxDelay != 0,
				"Exponential.Factor":  !nilFunc && factor != 0,
			})
			return
		}
		attempts := max(maxAttempts, 0)
		if attempts == 0 {
			attempts = retryrule.DefaultMaxAttempts
		}
		failures := int(fails % 4)
		limit := orDefault(backoff.Max, retry.DefaultMaxDelay)
		synctest.Test(t, func(t *testing.T) {
			ctx := context.Background()
			if deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Duration(deadline))
				defer cancel()
			}
			calls := 0
			start := time.Now()
			v, err := pipeline.New[int](stage).Execute(ctx, func(context.Context) (int, error) {
				calls++
				if calls > failures {
					return 1, nil
				}
				if hint > 0 {
					return 0, outcome.MarkThrottled(errors.New("slow down"), time.Duration(hint))
				}
				return 0, errors.New("flaky")
			})
			elapsed := time.Since(start)
			if float64(elapsed) > float64(calls-1)*float64(limit) {
				t.Fatalf("%d attempts took %v, more than Max (%v) per retry", calls, elapsed, limit)
			}
			if deadline > 0 && elapsed >= time.Duration(deadline) {
				t.Fatalf("the call slept past its deadline %v: %v", time.Duration(deadline), elapsed)
			}
			if err == nil {
				if v != 1 || calls != failures+1 || calls > attempts {
					t.Fatalf("success %d after %d calls, %d failures, MaxAttempts %d", v, calls, failures, attempts)
				}
				return
			}
			stop, ok := errors.AsType[*pipeline.StopError](err)
			switch {
			case !ok:
				t.Fatalf("a failed call returned %v, not a *pipeline.StopError", err)
			case stop.Reason == pipeline.AttemptsExhausted:
				if calls != attempts || stop.Attempts != calls {
					t.Fatalf("attempts exhausted after %d calls (%d reported), MaxAttempts %d", calls, stop.Attempts, attempts)
				}
			case stop.Reason == pipeline.Deadline || stop.Reason == pipeline.HintBeyondDeadline:
				if deadline <= 0 {
					t.Fatalf("%v without a deadline", err)
				}
			default:
				t.Fatalf("unexpected stop %v after %d calls", err, calls)
			}
		})
	})
}

// checkJittered checks that got is nominal jittered by j.
func checkJittered(t *testing.T, j retry.Jitter, got, nominal time.Duration) {
	t.Helper()
	lo := time.Duration(0)
	switch j {
	case retry.EqualJitter:
		lo = nominal - nominal/2
	case retry.NoJitter:
		lo = nominal
	}
	if got < lo || got > nominal {
		t.Fatalf("%v jitter of %v gave %v, want it in [%v, %v]", j, nominal, got, lo, nominal)
	}
}

// checkHint checks that b uses a retry-after hint of d as the verdict carries
// it (rounded up to the millisecond, clamped), capped at limit.
func checkHint(t *testing.T, b retry.Backoff, k outcome.Kind, d, limit time.Duration, src rand.Source) {
	t.Helper()
	v := outcome.Verdict{Kind: k}.WithRetryAfter(d)
	if v.RetryAfter() == 0 {
		return // no hint: the backoff's own delay, checked by the caller
	}
	want := min(v.RetryAfter(), limit)
	for n := 2; n <= 10; n++ {
		if got := b.Delay(n, v, src); got != want {
			t.Fatalf("Delay(%d) with the hint %v = %v, want %v (Max %v)", n, v.RetryAfter(), got, want, limit)
		}
	}
}

// checkConfig checks that a retry Config with backoff b validates, and New
// builds a stage, exactly when err, b's own validation, is nil.
func checkConfig(t *testing.T, err error, b retry.Backoff) {
	t.Helper()
	cfg := retry.Config{Backoff: b}
	if got := cfg.Validate(); (got == nil) != (err == nil) {
		t.Fatalf("Config{Backoff: %+v}.Validate() = %v, but the backoff's = %v", b, got, err)
	}
	if _, errNew := retry.New[int](cfg); (errNew == nil) != (err == nil) {
		t.Fatalf("New with %+v returned %v, but its Validate = %v", b, errNew, err)
	}
}

// orDefault returns d, or def if d is 0.
func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
