package pipeline_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/resilience-go/pipeline"
)

// semaphore is a counting semaphore of one's own: at most cap(slots) calls
// hold a slot at once, and a call that finds none free is refused.
type semaphore struct {
	slots chan struct{}
}

// errFull is the refusal of a full semaphore, shared by every refusal.
var errFull = &pipeline.StopError{Stage: "semaphore", Reason: pipeline.ConcurrencyLimited}

// Stage says what stage the semaphore makes.
func (s *semaphore) Stage() pipeline.StageInfo { return pipeline.StageInfo{Kind: "semaphore"} }

// Admit takes a slot for the call, or refuses it.
func (s *semaphore) Admit(context.Context, pipeline.Events) (pipeline.Permit, *pipeline.StopError) {
	select {
	case s.slots <- struct{}{}:
		return pipeline.Permit{}, nil
	default:
		return pipeline.Permit{}, errFull
	}
}

// Release gives the call's slot back.
func (s *semaphore) Release(context.Context, pipeline.Permit) { <-s.slots }

// A limiter of one's own becomes a stage with Guard, which takes care of
// what every such stage must: a call whose context is done takes no slot,
// a refusal reaches the caller as a StopError, and the slot goes back
// however the call ends, a panic included. Here a semaphore of one slot
// refuses a second call while the first is inside.
func ExampleGuard() {
	sem := &semaphore{slots: make(chan struct{}, 1)}
	p := pipeline.New(pipeline.Guard[string](sem))

	v, err := p.Execute(context.Background(), func(ctx context.Context) (string, error) {
		_, err := p.Execute(ctx, func(context.Context) (string, error) { return "second", nil })
		fmt.Println("second call:", err)
		fmt.Println("concurrency limited:", errors.Is(err, pipeline.ConcurrencyLimited))
		return "first", nil
	})
	fmt.Println(v, err)
	fmt.Println("slots held:", len(sem.slots))
	// Output:
	// second call: pipeline: semaphore: concurrency limit reached
	// concurrency limited: true
	// first <nil>
	// slots held: 0
}
