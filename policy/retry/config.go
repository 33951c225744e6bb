package retry

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/resilience-go/pipeline/budget"
)

// Config configures a retry stage. The zero value of every field means its
// default. Settings that cannot work are refused by [Config.Validate] and [New]
// with an error naming the field and its value.
type Config struct {
	// Name names the stage, typically after the dependency it calls; its
	// stop errors and events carry it (pipeline.StopError.Name,
	// pipeline.Source.Name). Empty means unnamed.
	Name string
	// MaxAttempts is the most attempts one call makes, counting the first, so 1
	// means no retry. Zero means 3.
	MaxAttempts int
	// Backoff decides the wait before each retry. Nil means the zero
	// [Exponential]: 100 ms (1 s when throttled) doubling up to 30 s, full jitter.
	Backoff Backoff
	// Budget pays for the retries: each retry takes one token first, and each
	// successful attempt deposits into it. Share one budget among everything that
	// calls the same dependency. Nil means unlimited.
	Budget *budget.Budget
	// Rand is the random source of the jitter. It must be safe for concurrent use
	// if the stage is (wrap a seeded generator in a mutex for reproducible runs).
	// Nil means math/rand/v2's top-level generator.
	Rand rand.Source
	// RefusalPause is how long a call that an inner stage refused (an open
	// breaker) waits before it returns, at most until the call's deadline and
	// the refusal's own hint, and less if the caller cancels, so a caller that
	// loops on refusals cannot spin.
	// Zero means 100 ms; a negative value means no pause,
	// for callers that pace themselves (a server that sheds the request at once).
	RefusalPause time.Duration
}

// validator is implemented by backoffs that can check their own settings, such as
// [Exponential] and [Constant].
type validator interface{ Validate() error }

// Validate reports the first setting that cannot work, naming the field and its
// value, or nil. Zero values are valid: they mean the defaults. It also validates
// the backoff if the backoff has a Validate method.
func (c Config) Validate() error {
	if c.MaxAttempts < 0 {
		return fmt.Errorf("retry: Config.MaxAttempts must be at least 1, got %d", c.MaxAttempts)
	}
	if f, ok := c.Backoff.(BackoffFunc); ok && f == nil {
		return fmt.Errorf("retry: Config.Backoff is a nil BackoffFunc")
	}
	if v, ok := c.Backoff.(validator); ok {
		if err := v.Validate(); err != nil {
			return err
		}
	}
	return nil
}
