package standard

import (
	"errors"
	"fmt"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/internal/limit"
	"github.com/resilience-go/pipeline/internal/nilness"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/ceiling"
	"github.com/resilience-go/pipeline/policy/fallback"
	"github.com/resilience-go/pipeline/policy/fault"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// Compose builds a pipeline of the stages given, the first outermost, with
// the result type T written once: each stage is given either by its
// configuration (a timeout.Config, retry.Config, hedge.Config or
// ceiling.Config, or a fallback.Config[T] or fault.Config[T], built for T
// here), by a shared *breaker.Breaker, *ratelimit.Limiter, *bulkhead.Bulkhead
// or *adaptive.Limiter (guarded here, as their Guard does),
// or as a pipeline.Policy[T] already built, such as a custom stage. So
//
//	standard.Compose[*http.Response](timeout.Config{Timeout: 5 * time.Second}, retry.Config{Budget: funds}, brk, hedge.Config{Breaker: brk, Budget: funds})
//
// is pipeline.New(timeout.New[*http.Response](...), retry.New[*http.Response](...),
// breaker.Guard[*http.Response](brk), hedge.New[*http.Response](...)) with
// every error checked. It returns an error naming the position of every stage
// that cannot be built or is none of these, and of every composition
// [pipeline.Check] refuses, instead of panicking as pipeline.New does.
func Compose[T any](stages ...any) (*pipeline.Pipeline[T], error) {
	built := make([]pipeline.Policy[T], len(stages))
	var errs []error
	for i, s := range stages {
		p, err := stage[T](s)
		if err != nil {
			errs = append(errs, fmt.Errorf("standard: Compose: stage %d: %w", i+1, err))
		}
		built[i] = p
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for _, p := range pipeline.Check(built...) {
		if p.Severity == pipeline.Error {
			errs = append(errs, fmt.Errorf("standard: Compose: %w", p))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return pipeline.New(built...), nil
}

// stage builds the stage s stands for, for T.
func stage[T any](s any) (pipeline.Policy[T], error) {
	switch s := s.(type) {
	case nil:
		return nil, errors.New("nil")
	case pipeline.Policy[T]:
		if nilness.Of(s) {
			return nil, fmt.Errorf("a nil %T", s)
		}
		return s, nil
	case timeout.Config:
		return timeout.New[T](s)
	case retry.Config:
		return retry.New[T](s)
	case hedge.Config:
		return hedge.New[T](s)
	case ceiling.Config:
		return ceiling.New[T](s)
	case fallback.Config[T]:
		return fallback.New(s)
	case fault.Config[T]:
		return fault.New(s)
	case *breaker.Breaker:
		if s == nil {
			return nil, errors.New("a nil *breaker.Breaker")
		}
		return breaker.Guard[T](s), nil
	}
	if nilness.Of(s) {
		return nil, fmt.Errorf("a nil %T", s)
	}
	if p, ok := limit.Stage[T](s); ok {
		return p, nil
	}
	var zero T
	return nil, fmt.Errorf("a %T is neither a pipeline.Policy[%T] nor a stage Compose builds (timeout.Config, retry.Config, hedge.Config, ceiling.Config, fallback.Config[T], fault.Config[T], *breaker.Breaker, %s)", s, zero, limit.Names)
}
