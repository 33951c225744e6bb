package pipeline_test

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/internal/hedgerule"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/policy/timeout"
)

// adversaryDuration is how long TestAdversary runs: briefly by default, as the
// test command runs it, and as long as PIPELINE_ADVERSARY says (a Go duration,
// such as 10m) on demand.
func adversaryDuration(t *testing.T) time.Duration {
	if s := os.Getenv("PIPELINE_ADVERSARY"); s != "" {
		d, err := time.ParseDuration(s)
		require.NoError(t, err, "PIPELINE_ADVERSARY")
		return d
	}
	return time.Second
}

var errAdversary = errors.New("adversary: dependency down")

// hookPanic is what the adversary's hooks panic with.
const hookPanic = "adversary: hook down"

// adversaryCall is the record of one Execute, shared with its attempts.
type adversaryCall struct {
	returned atomic.Bool
}

// adversaryValue is a value the work returns; it counts its releases.
type adversaryValue struct {
	call     *adversaryCall
	released atomic.Int32
}

// TestAdversary drives one full pipeline (a timeout that may abandon the work, retry with a
// budget, a breaker, a hedge) from many goroutines on real time, against work
// that succeeds, fails each way, panics, calls runtime.Goexit, ignores its
// context, or returns after its context ended, with event hooks that panic and
// a breaker hook that calls back into the breaker. It checks that every call
// returns exactly once (a value, an error or a panic of the kinds thrown), that
// no work starts after its call has returned, that no value is released twice
// or released and returned, that the budget and the breaker's probes stay in
// bounds, and that no goroutine outlives the calls.
func TestAdversary(t *testing.T) {
	if testing.Short() {
		t.Skip("real time")
	}
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.DiscardHandler)) // hooks that panic on a late return are logged
	baseline := runtime.NumGoroutine()
	const probes = 2
	var brk *breaker.Breaker
	var breakerHook atomic.Int64
	brk, err := breaker.New(breaker.Config{
		ConsecutiveFailures: 5, BreakDuration: 5 * time.Millisecond, HalfOpenProbes: probes,
		OnEvent: func(context.Context, pipeline.Source, pipeline.Event) {
			switch breakerHook.Add(1) % 61 {
			case 0:
				panic(hookPanic)
			case 1, 2, 3:
				if tk, err := brk.Admit(); err == nil { // the hook may call the breaker
					brk.Done(tk, outcome.Verdict{})
				}
			case 4, 5, 6:
				_ = brk.Snapshot()
			}
		},
	})
	require.NoError(t, err)
	funds := must(budget.New(budget.Config{Capacity: 20}))
	est := must(latency.New(latency.Config{}))
	for range hedgerule.DefaultMinSamples {
		est.Record(est.Now(), time.Millisecond)
	}

	var started, lateStarts, released, returnedAndReleased, pipelineHook atomic.Int64
	// Work that panics is never abandoned before it panics, or its panic
	// would end the test binary, as it must: so the grace is far longer than a
	// loaded machine keeps a goroutine waiting (at 2 ms a panic drawn by a
	// hedge's loser was once raised late, under the race detector with the
	// other packages' tests starting), and the work that ignores its context
	// outlasts the timeout and the grace together.
	p := pipeline.New(
		pipeline.Policy[*adversaryValue](must(timeout.New[*adversaryValue](timeout.Config{Timeout: 30 * time.Millisecond, Abandon: true, Grace: 20 * time.Millisecond}))),
		must(retry.New[*adversaryValue](retry.Config{Budget: funds, Backoff: retry.Constant{Interval: time.Millisecond}, RefusalPause: time.Millisecond})),
		breaker.Guard[*adversaryValue](brk),
		must(hedge.New[*adversaryValue](hedge.Config{Estimator: est, Budget: funds, MinDelay: time.Millisecond, Repeatable: true})),
	).With(pipeline.Options[*adversaryValue]{
		OnEvent: func(context.Context, pipeline.Source, pipeline.Event) {
			if pipelineHook.Add(1)%97 == 0 {
				panic(hookPanic)
			}
		},
		Release: func(v *adversaryValue) {
			released.Add(1)
			if v.released.Add(1) > 1 {
				returnedAndReleased.Add(1)
			}
		},
	})

	// work is the work of one call, drawing its behaviour from draw, which
	// its copies and abandoned attempts share with the calls that follow.
	work := func(call *adversaryCall, draw func() int) pipeline.Func[*adversaryValue] {
		return func(ctx context.Context) (*adversaryValue, error) {
			started.Add(1)
			if call.returned.Load() {
				lateStarts.Add(1)
			}
			v := &adversaryValue{call: call}
			switch draw() {
			case 0, 1:
				return v, errAdversary // transient
			case 3:
				return v, outcome.MarkPermanent(errAdversary)
			case 4:
				return v, outcome.MarkThrottled(errAdversary, time.Millisecond)
			case 5:
				panic(errAdversary)
			case 6:
				runtime.Goexit()
			case 7:
				time.Sleep(80 * time.Millisecond) // ignores its context, past the timeout and the grace
			case 8:
				<-ctx.Done() // returns only after its context ended
				time.Sleep(time.Millisecond)
				return v, ctx.Err()
			case 9, 10, 11:
				select {
				case <-time.After(5 * time.Millisecond): // slow enough to be hedged
				case <-ctx.Done():
					return v, ctx.Err()
				}
			}
			return v, nil
		}
	}

	deadline := time.Now().Add(adversaryDuration(t))
	var calls, returns, values, workPanics, hookPanics, goexits atomic.Int64
	var wg sync.WaitGroup
	for g := range 16 {
		var mu sync.Mutex
		rng := rand.New(rand.NewPCG(uint64(g), 99))
		draw := func() int {
			mu.Lock()
			defer mu.Unlock()
			return rng.IntN(40)
		}
		wg.Go(func() {
			for time.Now().Before(deadline) {
				call := new(adversaryCall)
				calls.Add(1)
				v, panicked, err := adversaryExecute(p, work(call, draw))
				call.returned.Store(true)
				returns.Add(1)
				switch {
				case panicked == nil:
					if v != nil {
						values.Add(1)
						if v.released.Load() != 0 {
							returnedAndReleased.Add(1)
						}
					}
					if err != nil {
						_, isStop := errors.AsType[*pipeline.StopError](err)
						assert.True(t, isStop || errors.Is(err, errAdversary) || errors.Is(err, pipeline.ErrAbandoned), "unexpected error %v", err)
					}
				case panicked == errAdversary:
					workPanics.Add(1)
				case panicked == pipeline.ErrGoexit:
					goexits.Add(1)
				case panicked == hookPanic:
					hookPanics.Add(1)
				default:
					t.Errorf("unexpected panic: %v", panicked)
				}
				s := brk.Snapshot()
				assert.LessOrEqual(t, s.Probes, probes, "probes in flight")
				tokens := funds.Tokens()
				assert.True(t, tokens >= 0 && tokens <= funds.Capacity(), "tokens %v out of [0, %v]", tokens, funds.Capacity())
			}
		})
	}
	wg.Wait()

	assert.Equal(t, calls.Load(), returns.Load(), "every Execute returned exactly once")
	assert.Zero(t, lateStarts.Load(), "work started after its call had returned")
	assert.Zero(t, returnedAndReleased.Load(), "a value was released twice, or released and returned")
	assert.Positive(t, workPanics.Load(), "no work panic reached a caller")
	assert.Positive(t, goexits.Load(), "no Goexit reached a caller")
	assert.Positive(t, hookPanics.Load(), "no hook panic reached a caller")
	// Eventually runs the condition on a goroutine of its own: one more.
	assert.Eventually(t, func() bool { return runtime.NumGoroutine() <= baseline+1 }, 5*time.Second, 10*time.Millisecond,
		"goroutines outlived the calls: %d, before %d", runtime.NumGoroutine(), baseline)
	t.Logf("%d calls, %d attempts, %d values returned, %d released; panics: %d work, %d hook, %d Goexit",
		calls.Load(), started.Load(), values.Load(), released.Load(), workPanics.Load(), hookPanics.Load(), goexits.Load())
}

// adversaryExecute runs one call and returns what it panicked with, if it
// did: the value the code panicked with, whether it reached the caller as it
// was or as a *pipeline.PanicError from another goroutine.
func adversaryExecute(p *pipeline.Pipeline[*adversaryValue], fn pipeline.Func[*adversaryValue]) (v *adversaryValue, panicked any, err error) {
	defer func() {
		panicked = recover()
		if pe, ok := panicked.(*pipeline.PanicError); ok {
			panicked = pe.Value
		}
	}()
	v, err = p.Execute(context.Background(), fn)
	return v, nil, err
}
