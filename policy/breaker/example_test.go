package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// A breaker guarding a dependency that fails, then recovers. The fake clock
// stands in for time passing; in production leave Config.Clock nil.
func Example() {
	clock := clockwork.NewFakeClock()
	b, err := breaker.New(breaker.Config{
		ConsecutiveFailures: 3,
		BreakJitter:         breaker.JitterNone, // exact breaks, for a reproducible example
		Clock:               clock,
		OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			if t, ok := e.(breaker.Transition); ok {
				fmt.Printf("  breaker: %v -> %v (%v)\n", t.From, t.To, t.Cause)
			}
		},
	})
	if err != nil {
		panic(err)
	}
	p := pipeline.New(breaker.Guard[string](b))

	healthy := false
	call := func(context.Context) (string, error) {
		if !healthy {
			return "", errors.New("connection refused")
		}
		return "pong", nil
	}

	for i := 1; i <= 4; i++ {
		_, err := p.Execute(context.Background(), call)
		fmt.Printf("call %d: %v\n", i, err)
	}

	clock.Advance(15 * time.Second)
	fmt.Println("after the break, State reads", b.State())
	healthy = true
	for i := 5; i <= 6; i++ {
		v, err := p.Execute(context.Background(), call)
		fmt.Printf("call %d: %q %v\n", i, v, err)
	}
	fmt.Println("state:", b.State())

	// Output:
	// call 1: connection refused
	// call 2: connection refused
	//   breaker: closed -> open (consecutive failures)
	// call 3: connection refused
	// call 4: pipeline: breaker: dependency unavailable (retry after 15s)
	// after the break, State reads half-open
	//   breaker: open -> half-open (break elapsed)
	// call 5: "pong" <nil>
	//   breaker: half-open -> closed (probes succeeded)
	// call 6: "pong" <nil>
	// state: closed
}

// Driving a breaker by hand, outside a pipeline: Admit before the attempt, Done
// (or Record, with a duration you measured) after it, exactly once.
func ExampleBreaker_Admit() {
	b, err := breaker.New(breaker.Config{ConsecutiveFailures: 1, BreakJitter: breaker.JitterNone, Clock: clockwork.NewFakeClock()})
	if err != nil {
		panic(err)
	}
	attempt := func(fail bool) {
		t, err := b.Admit()
		if err != nil {
			se, _ := errors.AsType[*pipeline.StopError](err)
			fmt.Println("refused, retry after", se.RetryAfter)
			return
		}
		v := outcome.Verdict{}
		if fail {
			v = outcome.Verdict{Kind: outcome.Transient}
		}
		b.Done(t, v)
		fmt.Println("ran; breaker is", b.State())
	}
	attempt(true)
	attempt(false)
	b.Reset()
	attempt(false)
	// Output:
	// ran; breaker is open
	// refused, retry after 15s
	// ran; breaker is closed
}

// Isolate takes a dependency out of service until Reset.
func ExampleBreaker_Isolate() {
	b, _ := breaker.New(breaker.Config{})
	b.Isolate()
	_, err := b.Admit()
	fmt.Println(b.State(), errors.Is(err, pipeline.DependencyUnavailable))
	b.Reset()
	fmt.Println(b.State())
	// Output:
	// isolated true
	// closed
}

// New refuses impossible settings, naming each one.
func ExampleConfig_Validate() {
	err := breaker.Config{HalfOpenProbes: -1, FailureRatio: 1.5}.Validate()
	fmt.Println(err)
	// Output:
	// breaker: Config.FailureRatio must lie between 0 and 1 (0 means off), got 1.5
	// breaker: Config.HalfOpenProbes must be at least 1 (0 means the default 1), got -1
}

// The measured normal latency at work: a minute of 20 ms calls makes the normal,
// then the dependency browns out to 200 ms. No threshold was configured.
func ExampleBreaker_NormalLatency() {
	clock := clockwork.NewFakeClock()
	b, err := breaker.New(breaker.Config{
		Clock: clock,
		OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			if t, ok := e.(breaker.Transition); ok && t.To == breaker.Open {
				fmt.Println("opened:", t.Cause)
			}
		},
	})
	if err != nil {
		panic(err)
	}
	call := func(d time.Duration) { // one call every 100 ms, taking d
		if t, err := b.Admit(); err == nil {
			clock.Advance(d)
			b.Done(t, outcome.Verdict{})
			clock.Advance(100*time.Millisecond - d)
		}
	}
	for range 600 {
		call(20 * time.Millisecond)
	}
	normal, _ := b.NormalLatency()
	fmt.Println("normal latency:", normal.Round(time.Millisecond))
	fmt.Println("slow above:", b.Snapshot().SlowCallThreshold.Round(time.Millisecond))

	start := clock.Now()
	for b.State() == breaker.Closed && clock.Since(start) < time.Minute {
		call(200 * time.Millisecond)
	}
	fmt.Println("after", clock.Since(start).Round(time.Second), "of brownout")
	normal, _ = b.NormalLatency()
	fmt.Println("normal latency, still:", normal.Round(time.Millisecond))
	// Output:
	// normal latency: 20ms
	// slow above: 60ms
	// opened: slow calls
	// after 15s of brownout
	// normal latency, still: 20ms
}

// The relative failure ratio: a dependency that normally fails 1% of the time
// trips at 5 × 1%, with no FailureRatio configured. Its rate is learned over
// 5 minutes (derived from the 30 s trip window), so a rise in failures moves it
// more slowly than it fills the trip window: the trip window reaches the rising
// trip point (here about 9%) after 12 s of 20% failures.
func ExampleBreaker_NormalFailureRate() {
	clock := clockwork.NewFakeClock()
	b, err := breaker.New(breaker.Config{Clock: clock})
	if err != nil {
		panic(err)
	}
	call := func(fails bool) {
		if t, err := b.Admit(); err == nil {
			v := outcome.Verdict{}
			if fails {
				v = outcome.Verdict{Kind: outcome.Transient}
			}
			b.Done(t, v)
			clock.Advance(100 * time.Millisecond)
		}
	}
	for i := range 3000 { // 5 minutes at 1% failures
		call(i%100 == 0)
	}
	rate, _ := b.NormalFailureRate()
	fmt.Printf("normal failure rate %.3f, trip point %.3f\n", rate, b.Snapshot().FailureTripPoint)
	start := clock.Now()
	for i := 0; b.State() == breaker.Closed && i < 600; i++ { // then 20% failures
		call(i%5 == 0)
	}
	rate, _ = b.NormalFailureRate()
	fmt.Printf("%v after %v; normal failure rate %.3f\n", b.State(), clock.Since(start).Round(time.Second), rate)
	// Output:
	// normal failure rate 0.010, trip point 0.050
	// open after 12s; normal failure rate 0.018
}

// A breaker with a recovery ramp. After its probes succeed it does not close:
// it admits a growing share of the attempts offered (here 100 a second) over a
// quarter of the 15 s break, and closes when that share reaches 1. A slow call
// during the ramp would halve the share instead of tripping the breaker; a
// failure would re-open it at once.
func ExampleRecovery() {
	clock := clockwork.NewFakeClock()
	b, err := breaker.New(breaker.Config{
		ConsecutiveFailures: 1,
		BreakJitter:         breaker.JitterNone,
		Recovery:            &breaker.Recovery{}, // the defaults
		Clock:               clock,
		OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			if t, ok := e.(breaker.Transition); ok {
				fmt.Printf("  breaker: %v -> %v (%v)\n", t.From, t.To, t.Cause)
			}
		},
	})
	if err != nil {
		panic(err)
	}
	attempt := func(v outcome.Verdict) bool {
		t, err := b.Admit()
		if err != nil {
			return false
		}
		b.Done(t, v)
		return true
	}
	attempt(outcome.Verdict{Kind: outcome.Transient})
	clock.Advance(15 * time.Second)
	attempt(outcome.Verdict{})
	attempt(outcome.Verdict{})
	fmt.Println("ramp over", b.Snapshot().RampLength)
	for second := 0; b.State() == breaker.Recovering; second++ {
		admitted := 0
		for range 100 {
			if attempt(outcome.Verdict{}) {
				admitted++
			}
		}
		fmt.Printf("second %d: p = %.2f, %d of 100 admitted\n", second, b.Snapshot().RampFraction, admitted)
		clock.Advance(time.Second)
	}
	fmt.Println("state:", b.State())
	fmt.Println("admitted:", attempt(outcome.Verdict{}))
	// Output:
	//   breaker: closed -> open (consecutive failures)
	//   breaker: open -> half-open (break elapsed)
	//   breaker: half-open -> recovering (probes succeeded)
	// ramp over 3.75s
	// second 0: p = 0.05, 5 of 100 admitted
	// second 1: p = 0.30, 30 of 100 admitted
	// second 2: p = 0.56, 56 of 100 admitted
	// second 3: p = 0.81, 81 of 100 admitted
	// state: closed
	//   breaker: recovering -> closed (ramp done)
	// admitted: true
}

// A new configuration tried in shadow mode: every call reaches the dependency,
// and the events say what the breaker would have done. Out of shadow mode, the
// same breaker refuses for the rest of its break.
func ExampleBreaker_SetShadow() {
	clock := clockwork.NewFakeClock()
	b, err := breaker.New(breaker.Config{
		ConsecutiveFailures: 2,
		BreakJitter:         breaker.JitterNone,
		Clock:               clock,
		Shadow:              true,
		OnEvent: func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			switch e := e.(type) {
			case breaker.Transition:
				fmt.Printf("  shadow %v: %v -> %v (%v)\n", e.Shadow, e.From, e.To, e.Cause)
			case breaker.Rejection:
				fmt.Printf("  shadow %v: would refuse while %v\n", e.Shadow, e.State)
			}
		},
	})
	if err != nil {
		panic(err)
	}
	p := pipeline.New(breaker.Guard[string](b))
	call := func(context.Context) (string, error) { return "", errors.New("connection refused") }
	for i := 1; i <= 3; i++ {
		_, err := p.Execute(context.Background(), call)
		fmt.Printf("call %d: %v\n", i, err)
	}
	b.SetShadow(false)
	_, err = p.Execute(context.Background(), call)
	se, _ := errors.AsType[*pipeline.StopError](err)
	fmt.Println("call 4: refused, retry after", se.RetryAfter)
	// Output:
	// call 1: connection refused
	//   shadow true: closed -> open (consecutive failures)
	// call 2: connection refused
	//   shadow true: would refuse while open
	// call 3: connection refused
	//   shadow false: would refuse while open
	// call 4: refused, retry after 15s
}

// IsolateFor rests a dependency for a known time, such as a maintenance
// window; after it, the breaker probes as after any break.
func ExampleBreaker_IsolateFor() {
	clock := clockwork.NewFakeClock()
	b, err := breaker.New(breaker.Config{Clock: clock})
	if err != nil {
		panic(err)
	}
	b.IsolateFor(10 * time.Minute)
	_, err = b.Admit()
	se, _ := errors.AsType[*pipeline.StopError](err)
	fmt.Println(b.State(), "retry after", se.RetryAfter)
	clock.Advance(10 * time.Minute)
	t, err := b.Admit()
	fmt.Println(b.State(), "probe:", err == nil && t.Probe())
	// Output:
	// open retry after 10m0s
	// half-open probe: true
}
