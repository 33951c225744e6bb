package bench

import (
	"context"
	"errors"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/adaptivelimiter"
	fsbulkhead "github.com/failsafe-go/failsafe-go/bulkhead"
	"github.com/failsafe-go/failsafe-go/ratelimiter"
	"golang.org/x/time/rate"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/adaptive"
	"github.com/resilience-go/pipeline/policy/bulkhead"
	"github.com/resilience-go/pipeline/policy/ratelimit"
)

// The limits of the limit benchmarks' success paths are set so that they
// never refuse: a rate far above what one core can ask for, and more slots
// than goroutines.
const (
	// OpenRate is the rate of every rate limiter on the success path: one
	// call a nanosecond, with a burst of a million.
	OpenRate  = 1e9
	OpenBurst = 1 << 20
	// OpenSlots is the size of every bulkhead and semaphore on the success
	// path.
	OpenSlots = 1 << 20
)

// ErrRefused is what the peer rows that refuse by hand return.
var ErrRefused = errors.New("bench: refused")

// OursRateLimit is our rate limiter's stage alone, on the success path.
func OursRateLimit() *pipeline.Pipeline[int] {
	return pipeline.New(ratelimit.Guard[int](must(ratelimit.New(ratelimit.Config{Rate: OpenRate, Burst: OpenBurst}))))
}

// OursRateLimitRefusing is our rate limiter's stage, empty for the next hour.
func OursRateLimitRefusing() *pipeline.Pipeline[int] {
	l := must(ratelimit.New(ratelimit.Config{Rate: 1.0 / 3600, Burst: 1}))
	l.Allow()
	return pipeline.New(ratelimit.Guard[int](l))
}

// XRate is golang.org/x/time/rate's limiter with the same settings as
// OursRateLimit, or empty for the next hour when refusing.
func XRate(refusing bool) *rate.Limiter {
	if refusing {
		l := rate.NewLimiter(rate.Limit(1.0/3600), 1)
		l.Allow()
		return l
	}
	return rate.NewLimiter(rate.Limit(OpenRate), OpenBurst)
}

// XRateStage is x/time/rate's Limiter.Allow made a pipeline stage: what the
// success path of a rate-limit stage built on it would cost, Allow plus one
// stage's overhead.
func XRateStage() *pipeline.Pipeline[int] {
	l := XRate(false)
	return pipeline.New(pipeline.PolicyFunc[int](func(ctx context.Context, next pipeline.Next[int]) pipeline.Result[int] {
		if !l.Allow() {
			return pipeline.Result[int]{Err: ErrRefused, Verdict: outcome.Verdict{Kind: outcome.Throttled, SelfImposed: true}}
		}
		return next.Run(ctx)
	}))
}

// FailsafeRateLimit is failsafe-go's smooth rate limiter at one execution a
// nanosecond, or one an hour, already spent, when refusing.
func FailsafeRateLimit(refusing bool) failsafe.Executor[int] {
	if refusing {
		rl := ratelimiter.NewSmoothWithMaxRate[int](time.Hour)
		_ = rl.TryAcquirePermit()
		return failsafe.With[int](rl).WithContext(context.Background())
	}
	return failsafe.With[int](ratelimiter.NewSmoothWithMaxRate[int](time.Nanosecond)).WithContext(context.Background())
}

// OursBulkhead is our bulkhead's stage alone, never full.
func OursBulkhead() *pipeline.Pipeline[int] {
	return pipeline.New(bulkhead.Guard[int](must(bulkhead.New(bulkhead.Config{MaxConcurrent: OpenSlots}))))
}

// Semaphore is the buffered-channel semaphore a bulkhead is measured
// against: a send takes a slot, a receive gives it back.
type Semaphore chan struct{}

// Call runs fn in a slot, or returns ErrRefused if none is free.
func (s Semaphore) Call(fn func() (int, error)) (int, error) {
	select {
	case s <- struct{}{}:
	default:
		return 0, ErrRefused
	}
	defer func() { <-s }()
	return fn()
}

// FailsafeBulkhead is failsafe-go's bulkhead, never full.
func FailsafeBulkhead() failsafe.Executor[int] {
	return failsafe.With[int](fsbulkhead.New[int](OpenSlots)).WithContext(context.Background())
}

// OursAdaptive is our adaptive limit's stage alone, with its defaults.
func OursAdaptive() *pipeline.Pipeline[int] {
	return pipeline.New(adaptive.Guard[int](must(adaptive.New(adaptive.Config{}))))
}

// FailsafeAdaptive is failsafe-go's adaptive limiter with its defaults.
func FailsafeAdaptive() failsafe.Executor[int] {
	return failsafe.With[int](adaptivelimiter.NewWithDefaults[int]()).WithContext(context.Background())
}
