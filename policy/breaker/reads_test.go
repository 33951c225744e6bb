package breaker_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// Two breakers with the same configuration see the same attempts; one is read
// (Snapshot, NormalLatency, Pressure, State) after every step, the other never.
// Reading must not change a single decision: the transitions and the final
// snapshot are the same. The configuration has both a constant slow-call
// threshold and a measured normal, where a judgement decided by the constant
// alone could once skip the baseline that a reader refreshed.
func TestReadsNeverChangeDecisions(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := breaker.Config{
			ConsecutiveFailures: 1000,
			MinimumCalls:        rapid.IntRange(2, 20).Draw(t, "minimumCalls"),
			SlowCallThreshold:   time.Duration(rapid.IntRange(20, 200).Draw(t, "thresholdMs")) * time.Millisecond,
			SlowCalls:           breaker.SlowCalls{MinimumSamples: rapid.IntRange(1, 30).Draw(t, "minimumSamples")},
			BreakJitter:         breaker.JitterNone,
		}
		if rapid.Bool().Draw(t, "ramp") {
			cfg.Recovery = &breaker.Recovery{}
		}
		type step struct {
			wait, took time.Duration
			fail       bool
		}
		steps := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) step {
			return step{
				wait: time.Duration(rapid.IntRange(0, 3000).Draw(t, "waitMs")) * time.Millisecond,
				took: time.Duration(rapid.IntRange(1, 400).Draw(t, "tookMs")) * time.Millisecond,
				fail: rapid.IntRange(0, 9).Draw(t, "fail") == 0,
			}
		}), 1, 300).Draw(t, "steps")

		run := func(read bool) ([]string, breaker.Snapshot) {
			clock := clockwork.NewFakeClockAt(epoch)
			var log []string
			c := cfg
			c.Clock, c.Rand = clock, rand.NewPCG(1, 2)
			c.OnEvent = func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
				if tr, ok := e.(breaker.Transition); ok {
					log = append(log, tr.From.String()+"->"+tr.To.String()+":"+tr.Cause.String())
				}
			}
			b, err := breaker.New(c)
			require.NoError(t, err)
			for _, s := range steps {
				clock.Advance(s.wait)
				tk, err := b.Admit()
				if read {
					b.Snapshot()
				}
				if err != nil {
					continue
				}
				clock.Advance(s.took)
				if read {
					b.NormalLatency()
					b.Pressure()
				}
				v := outcome.Verdict{}
				if s.fail {
					v = outcome.Verdict{Kind: outcome.Transient}
				}
				b.Done(tk, v)
				if read {
					b.Snapshot()
					b.State()
				}
			}
			return log, b.Snapshot()
		}
		quietLog, quiet := run(false)
		readLog, read := run(true)
		require.Equal(t, quietLog, readLog, "reading the breaker changed its transitions")
		require.Equal(t, quiet, read, "reading the breaker changed its state")
	})
}

// TestAClockSetBackLengthensNoHint: an injected clock set back after a trip
// gives the same refusal with and without a hook, the rest of the break as the
// latest reading saw it; the lock-free refusal used to measure it from the
// earlier reading, an hour longer (issue #27 item 4).
func TestAClockSetBackLengthensNoHint(t *testing.T) {
	for _, hooked := range []bool{false, true} {
		clock := clockwork.NewFakeClock()
		cfg := breaker.Config{ConsecutiveFailures: 1, BreakDuration: 10 * time.Second, BreakJitter: breaker.JitterNone, Clock: clock}
		if hooked {
			cfg.OnEvent = func(context.Context, pipeline.Source, pipeline.Event) {}
		}
		b, err := breaker.New(cfg)
		require.NoError(t, err)
		tk, err := b.Admit()
		require.NoError(t, err)
		b.Done(tk, outcome.Verdict{Kind: outcome.Transient})
		clock.Advance(-time.Hour)
		_, err = b.Admit()
		se, ok := errors.AsType[*pipeline.StopError](err)
		require.True(t, ok, "refused: %v", err)
		assert.Equal(t, 10*time.Second, se.RetryAfter, "hook %v", hooked)
	}
}

// TestABreakerIsTimedOnItsCallersClock builds a breaker on real time outside
// a synctest bubble and trips it inside one, whose time starts at
// 2000-01-01: the breaker counts from its first reading, so the refusal's
// hint is the break and the breaker probes once the break has passed on the
// bubble's clock. (Timed from New, it refused with a hint of about 236,000
// hours, the distance between the two clocks, and stayed open.)
func TestABreakerIsTimedOnItsCallersClock(t *testing.T) {
	b, err := breaker.New(breaker.Config{ConsecutiveFailures: 1, BreakDuration: 10 * time.Second, BreakJitter: breaker.JitterNone})
	require.NoError(t, err)
	synctest.Test(t, func(t *testing.T) {
		tk, err := b.Admit()
		require.NoError(t, err)
		b.Done(tk, outcome.Verdict{Kind: outcome.Transient})
		_, err = b.Admit()
		se, ok := errors.AsType[*pipeline.StopError](err)
		require.True(t, ok, "refused: %v", err)
		assert.Equal(t, 10*time.Second, se.RetryAfter)
		time.Sleep(10 * time.Second)
		_, err = b.Admit()
		assert.NoError(t, err, "the probe after the break")
	})
}
