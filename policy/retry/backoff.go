package retry

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/resilience-go/pipeline/outcome"
)

// Defaults of the backoffs' zero-valued fields.
const (
	// defaultBase is the nominal delay before the first retry after a Transient
	// failure, and the default interval of [Constant].
	defaultBase = 100 * time.Millisecond
	// defaultThrottledBase is the nominal delay before the first retry after a
	// Throttled failure that came without a retry-after hint.
	defaultThrottledBase = time.Second
	// defaultFactor is the growth of the nominal delay from one retry to the next.
	defaultFactor = 2.0
	// defaultMaxDelay caps every delay, and a server's retry-after hint.
	defaultMaxDelay = 30 * time.Second
)

// Backoff decides how long to wait before a retry. It must be a pure function of
// its arguments and the values it draws from src, and safe for concurrent use.
type Backoff interface {
	// Delay returns the wait before attempt number attempt (2 for the first
	// retry), after the previous attempt failed with verdict v. src is the
	// retry's random source. A negative delay counts as 0.
	Delay(attempt int, v outcome.Verdict, src rand.Source) time.Duration
}

// BackoffFunc adapts a plain function to a [Backoff]. A custom backoff decides
// for itself what to do with a server's retry-after hint (v.RetryAfter()).
type BackoffFunc func(attempt int, v outcome.Verdict, src rand.Source) time.Duration

// Delay returns f(attempt, v, src).
func (f BackoffFunc) Delay(attempt int, v outcome.Verdict, src rand.Source) time.Duration {
	return f(attempt, v, src)
}

// Exponential is the default backoff. The nominal delay before attempt n is
// base x Factor^(n-2), capped at Max, where base is Base after a Transient
// failure and ThrottledBase after a Throttled one; the capped delay is then
// jittered. A server's retry-after hint replaces all that: it is used as given,
// capped at Max, without jitter.
//
// The zero value is the default: 100 ms, 1 s, factor 2, cap 30 s, full jitter,
// which gives nominal delays of 100 ms, 200 ms, 400 ms, ... for transient failures
// and 1 s, 2 s, 4 s, ... for throttled ones.
type Exponential struct {
	// Base is the nominal delay before the first retry of a Transient failure.
	// Zero means 100 ms.
	Base time.Duration
	// ThrottledBase is the nominal delay before the first retry of a Throttled
	// failure without a hint. Zero means 1 s.
	ThrottledBase time.Duration
	// Factor multiplies the nominal delay at each retry; at least 1. Zero means
	// 2.
	Factor float64
	// Max caps every delay and every hint. Zero means 30 s.
	Max time.Duration
	// Jitter spreads the capped delay. The zero value is [FullJitter].
	Jitter Jitter
}

// Validate reports the first setting that cannot work, naming the field and its
// value, or nil. Zero values are valid: they mean the defaults.
func (e Exponential) Validate() error {
	for _, f := range [...]struct {
		name string
		d    time.Duration
	}{{"Base", e.Base}, {"ThrottledBase", e.ThrottledBase}, {"Max", e.Max}} {
		if f.d < 0 {
			return fmt.Errorf("retry: Exponential.%s must not be negative, got %v", f.name, f.d)
		}
	}
	if e.Factor != 0 && !(e.Factor >= 1 && !math.IsInf(e.Factor, 1)) {
		return fmt.Errorf("retry: Exponential.Factor must be a finite number >= 1, got %v", e.Factor)
	}
	d := e.withDefaults()
	if d.Base > d.Max {
		return fmt.Errorf("retry: Exponential.Base (%v) must not exceed Exponential.Max (%v)", d.Base, d.Max)
	}
	if d.ThrottledBase > d.Max {
		return fmt.Errorf("retry: Exponential.ThrottledBase (%v) must not exceed Exponential.Max (%v)", d.ThrottledBase, d.Max)
	}
	return e.Jitter.validate("Exponential.Jitter")
}

// withDefaults returns e with every zero field replaced by its default.
func (e Exponential) withDefaults() Exponential {
	if e.Base == 0 {
		e.Base = defaultBase
	}
	if e.ThrottledBase == 0 {
		e.ThrottledBase = defaultThrottledBase
	}
	if e.Factor == 0 {
		e.Factor = defaultFactor
	}
	if e.Max == 0 {
		e.Max = defaultMaxDelay
	}
	return e
}

// Delay returns the wait before attempt (at least 2) after a failure with
// verdict v: the hint capped at Max if v has one, otherwise the nominal delay,
// capped and jittered with src.
func (e Exponential) Delay(attempt int, v outcome.Verdict, src rand.Source) time.Duration {
	e = e.withDefaults()
	if v.RetryAfter() > 0 {
		return min(v.RetryAfter(), e.Max)
	}
	return e.Jitter.Apply(e.Nominal(attempt, v.Kind), src)
}

// Nominal returns the capped delay before attempt after a failure of kind k,
// before jitter: base x Factor^(attempt-2), at most Max. An attempt below 2
// counts as 2.
func (e Exponential) Nominal(attempt int, k outcome.Kind) time.Duration {
	e = e.withDefaults()
	base := e.Base
	if k == outcome.Throttled {
		base = e.ThrottledBase
	}
	f := float64(base) * math.Pow(e.Factor, float64(max(attempt, 2)-2))
	if f >= float64(e.Max) {
		return e.Max
	}
	return time.Duration(f)
}

// Constant waits the same nominal Interval before every retry, jittered. A
// server's retry-after hint replaces it: used as given, capped at Max, without
// jitter. The zero value waits 100 ms with full jitter and caps hints at 30 s.
type Constant struct {
	// Interval is the nominal delay before every retry. Zero means
	// 100 ms.
	Interval time.Duration
	// Max caps a server's hint, and must not be below Interval. Zero means
	// 30 s.
	Max time.Duration
	// Jitter spreads the interval. The zero value is [FullJitter].
	Jitter Jitter
}

// Validate reports the first setting that cannot work, naming the field and its
// value, or nil. Zero values are valid: they mean the defaults.
func (c Constant) Validate() error {
	if c.Interval < 0 {
		return fmt.Errorf("retry: Constant.Interval must not be negative, got %v", c.Interval)
	}
	if c.Max < 0 {
		return fmt.Errorf("retry: Constant.Max must not be negative, got %v", c.Max)
	}
	if d := c.withDefaults(); d.Interval > d.Max {
		return fmt.Errorf("retry: Constant.Interval (%v) must not exceed Constant.Max (%v)", d.Interval, d.Max)
	}
	return c.Jitter.validate("Constant.Jitter")
}

// withDefaults returns c with every zero field replaced by its default.
func (c Constant) withDefaults() Constant {
	if c.Interval == 0 {
		c.Interval = defaultBase
	}
	if c.Max == 0 {
		c.Max = defaultMaxDelay
	}
	return c
}

// Delay returns the hint capped at Max if v has one, otherwise Interval jittered
// with src. The attempt number does not matter.
func (c Constant) Delay(_ int, v outcome.Verdict, src rand.Source) time.Duration {
	c = c.withDefaults()
	if v.RetryAfter() > 0 {
		return min(v.RetryAfter(), c.Max)
	}
	return c.Jitter.Apply(c.Interval, src)
}
