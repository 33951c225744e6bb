package retry

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline/outcome"
)

var (
	transient = outcome.Verdict{Kind: outcome.Transient}
	throttled = outcome.Verdict{Kind: outcome.Throttled}
)

func TestExponentialNominal(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name    string
		e       Exponential
		kind    outcome.Kind
		attempt int
		want    time.Duration
	}{
		{"first retry, transient", Exponential{}, outcome.Transient, 2, 100 * ms},
		{"second retry, transient", Exponential{}, outcome.Transient, 3, 200 * ms},
		{"fifth retry, transient", Exponential{}, outcome.Transient, 6, 1600 * ms},
		{"capped, transient", Exponential{}, outcome.Transient, 11, 30 * time.Second},
		{"first retry, throttled", Exponential{}, outcome.Throttled, 2, time.Second},
		{"third retry, throttled", Exponential{}, outcome.Throttled, 4, 4 * time.Second},
		{"capped, throttled", Exponential{}, outcome.Throttled, 7, 30 * time.Second},
		{"huge attempt never overflows", Exponential{}, outcome.Transient, 1 << 30, 30 * time.Second},
		{"attempt below 2 counts as 2", Exponential{}, outcome.Transient, 0, 100 * ms},
		{"factor 3", Exponential{Factor: 3}, outcome.Transient, 4, 900 * ms},
		{"factor 1 is constant", Exponential{Factor: 1, Base: 50 * ms}, outcome.Transient, 9, 50 * ms},
		{"fractional factor", Exponential{Factor: 1.5, Base: 100 * ms}, outcome.Transient, 4, 225 * ms},
		{"own cap", Exponential{Max: 250 * ms}, outcome.Transient, 4, 250 * ms},
		{"own bases", Exponential{Base: 10 * ms, ThrottledBase: 20 * ms}, outcome.Throttled, 3, 40 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.e.Nominal(tt.attempt, tt.kind))
			e := tt.e
			e.Jitter = NoJitter
			assert.Equal(t, tt.want, e.Delay(tt.attempt, outcome.Verdict{Kind: tt.kind}, highest))
		})
	}
}

func TestExponentialJitterBounds(t *testing.T) {
	for _, tt := range []struct {
		jitter    Jitter
		low, high time.Duration
	}{
		{FullJitter, 0, 400 * time.Millisecond},
		{EqualJitter, 200 * time.Millisecond, 400 * time.Millisecond},
		{NoJitter, 400 * time.Millisecond, 400 * time.Millisecond},
	} {
		e := Exponential{Jitter: tt.jitter}
		assert.Equal(t, tt.low, e.Delay(4, transient, lowest), "%v low", tt.jitter)
		assert.Equal(t, tt.high, e.Delay(4, transient, highest), "%v high", tt.jitter)
	}
}

func TestServerHintIsUsedAsGivenAndCapped(t *testing.T) {
	hinted := throttled.WithRetryAfter(7 * time.Second)
	for _, b := range []Backoff{Exponential{}, Exponential{Jitter: EqualJitter}, Constant{}} {
		assert.Equal(t, 7*time.Second, b.Delay(2, hinted, lowest), "%T: no jitter on a hint", b)
		assert.Equal(t, 7*time.Second, b.Delay(5, hinted, highest), "%T: not grown with the attempt", b)
	}
	long := transient.WithRetryAfter(5 * time.Minute)
	assert.Equal(t, 30*time.Second, Exponential{}.Delay(2, long, lowest))
	assert.Equal(t, 10*time.Second, Exponential{Max: 10 * time.Second}.Delay(2, long, lowest))
	assert.Equal(t, 30*time.Second, Constant{}.Delay(2, long, lowest))
}

func TestConstant(t *testing.T) {
	assert.Equal(t, 100*time.Millisecond, Constant{}.Delay(9, transient, highest))
	assert.Equal(t, time.Duration(0), Constant{}.Delay(9, transient, lowest))
	c := Constant{Interval: time.Second, Jitter: NoJitter}
	for attempt := 2; attempt < 6; attempt++ {
		assert.Equal(t, time.Second, c.Delay(attempt, throttled, lowest))
	}
	assert.Equal(t, 500*time.Millisecond, Constant{Interval: time.Second, Jitter: EqualJitter}.Delay(2, transient, lowest))
}

func TestBackoffFunc(t *testing.T) {
	f := BackoffFunc(func(attempt int, v outcome.Verdict, _ rand.Source) time.Duration {
		return time.Duration(attempt) * time.Second
	})
	assert.Equal(t, 3*time.Second, f.Delay(3, transient, lowest))
}

func TestBackoffValidation(t *testing.T) {
	tests := []struct {
		b    interface{ Validate() error }
		want string
	}{
		{Exponential{Base: -1}, "retry: Exponential.Base must not be negative, got -1ns"},
		{Exponential{ThrottledBase: -time.Second}, "retry: Exponential.ThrottledBase must not be negative, got -1s"},
		{Exponential{Max: -time.Second}, "retry: Exponential.Max must not be negative, got -1s"},
		{Exponential{Factor: 0.5}, "retry: Exponential.Factor must be a finite number >= 1, got 0.5"},
		{Exponential{Factor: -2}, "retry: Exponential.Factor must be a finite number >= 1, got -2"},
		{Exponential{Base: time.Minute}, "retry: Exponential.Base (1m0s) must not exceed Exponential.Max (30s)"},
		{Exponential{Max: 500 * time.Millisecond}, "retry: Exponential.ThrottledBase (1s) must not exceed Exponential.Max (500ms)"},
		{Exponential{Jitter: 3}, "retry: Exponential.Jitter must be FullJitter, EqualJitter or NoJitter, got retry.Jitter(3)"},
		{Constant{Interval: -1}, "retry: Constant.Interval must not be negative, got -1ns"},
		{Constant{Max: -1}, "retry: Constant.Max must not be negative, got -1ns"},
		{Constant{Interval: time.Minute}, "retry: Constant.Interval (1m0s) must not exceed Constant.Max (30s)"},
		{Constant{Jitter: 9}, "retry: Constant.Jitter must be FullJitter, EqualJitter or NoJitter, got retry.Jitter(9)"},
	}
	for _, tt := range tests {
		assert.EqualError(t, tt.b.Validate(), tt.want)
	}
	for _, ok := range []interface{ Validate() error }{
		Exponential{}, Exponential{Factor: 1}, Exponential{Base: 30 * time.Second}, Constant{}, Constant{Interval: 30 * time.Second},
	} {
		assert.NoError(t, ok.Validate(), "%+v", ok)
	}
}

// TestBackoffProperties: a delay never exceeds the cap, except that a hint is
// capped too; full jitter stays in [0, d] and equal jitter in [d/2, d] of the
// nominal delay; the nominal delay never shrinks from one attempt to the next.
func TestBackoffProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		e := Exponential{
			Base:          time.Duration(rapid.Int64Range(1, int64(time.Second)).Draw(t, "base")),
			ThrottledBase: time.Duration(rapid.Int64Range(1, int64(5*time.Second)).Draw(t, "throttledBase")),
			Factor:        rapid.Float64Range(1, 10).Draw(t, "factor"),
			Max:           time.Duration(rapid.Int64Range(int64(5*time.Second), int64(time.Hour)).Draw(t, "max")),
			Jitter:        Jitter(rapid.IntRange(0, 2).Draw(t, "jitter")),
		}
		attempt := rapid.IntRange(2, 200).Draw(t, "attempt")
		v := outcome.Verdict{Kind: rapid.SampledFrom([]outcome.Kind{outcome.Transient, outcome.Throttled}).Draw(t, "kind")}
		hint := time.Duration(rapid.Int64Range(0, int64(2*time.Hour)).Draw(t, "hint"))
		v = v.WithRetryAfter(hint)
		src := rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 0)

		d := e.Delay(attempt, v, src)
		if d < 0 || d > e.Max {
			t.Fatalf("delay %v outside [0, %v]", d, e.Max)
		}
		if v.RetryAfter() > 0 {
			if want := min(v.RetryAfter(), e.Max); d != want {
				t.Fatalf("with hint %v the delay is %v, want %v", v.RetryAfter(), d, want)
			}
			return
		}
		nominal := e.Nominal(attempt, v.Kind)
		if nominal > e.Max || nominal < e.Nominal(attempt-1, v.Kind) {
			t.Fatalf("nominal %v for attempt %d: above the cap or below the previous %v", nominal, attempt, e.Nominal(attempt-1, v.Kind))
		}
		switch e.Jitter {
		case FullJitter:
			if d > nominal {
				t.Fatalf("full jitter gave %v above nominal %v", d, nominal)
			}
		case EqualJitter:
			if 2*d < nominal || d > nominal {
				t.Fatalf("equal jitter gave %v outside [%v/2, %v]", d, nominal, nominal)
			}
		case NoJitter:
			if d != nominal {
				t.Fatalf("no jitter gave %v, nominal %v", d, nominal)
			}
		}
	})
}
