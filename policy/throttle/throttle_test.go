package throttle_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/throttle"
)

// source is a rand.Source whose every draw reads, through rand.Rand.Float64,
// as u: source(u × 2^53) for a u in [0, 1).
type source uint64

func (s source) Uint64() uint64 { return uint64(s) }

// draws returns the source whose every draw is u.
func draws(u float64) source { return source(u * (1 << 53)) }

// dial is a source whose draws read as what it was last set to.
type dial struct{ u source }

func (d *dial) Uint64() uint64 { return d.u.Uint64() }
func (d *dial) set(u float64)  { d.u = draws(u) }

var (
	alwaysRefuse = draws(0)          // refuses whenever the probability is above 0
	neverRefuse  = source(1<<53 - 1) // a draw of 1 - 2^-53: above any probability the rule gives
	verdicts     = map[string]outcome.Verdict{
		"ok":           {},
		"transient":    {Kind: outcome.Transient},
		"throttled":    {Kind: outcome.Throttled},
		"permanent":    {Kind: outcome.Permanent},
		"canceled":     {Kind: outcome.Permanent, Canceled: true},
		"self-imposed": {Kind: outcome.Throttled, SelfImposed: true},
	}
)

// TestWhatCounts is the specification of the counts, step by step, on one
// throttle (K 2, no cap) whose draws read as 0.3 at first: an attempt is
// refused whenever the probability is above the draw.
func TestWhatCounts(t *testing.T) {
	clock := clockwork.NewFakeClock()
	draw := &dial{}
	draw.set(0.3)
	th := mustNew(t, throttle.Config{MaxRejection: 1, Clock: clock, Rand: draw})
	var held []throttle.Ticket
	admit := func(t *testing.T) {
		tk, err := th.Admit()
		require.NoError(t, err)
		held = append(held, tk)
	}
	record := func(verdict string) func(*testing.T) {
		return func(t *testing.T) {
			require.NotEmpty(t, held)
			th.Record(held[0], verdicts[verdict])
			held = held[1:]
		}
	}
	call := func(verdict string) func(*testing.T) {
		return func(t *testing.T) { admit(t); record(verdict)(t) }
	}
	for i, step := range []struct {
		do                string
		run               func(*testing.T)
		requests, accepts int
		probability       float64
	}{
		{"an attempt in flight counts for nothing", admit, 0, 0, 0},
		{"nor do two: the second of two at once is not refused", admit, 0, 0, 0},
		{"the first answers OK: a request, an accept", record("ok"), 1, 1, 0},
		{"the second fails: a request only", record("transient"), 2, 1, 0},
		{"a 429: a request only; (3 - 2×1)/4", call("throttled"), 3, 1, 0.25},
		{"a Permanent answer is an accept", call("permanent"), 4, 2, 0},
		{"the caller's cancellation counts for nothing", call("canceled"), 4, 2, 0},
		{"a refusal of an inner stage counts for nothing", call("self-imposed"), 4, 2, 0},
		{"nor does the zero Ticket", func(*testing.T) { th.Record(throttle.Ticket{}, verdicts["transient"]) }, 4, 2, 0},
		{"failures: (5 - 4)/6", call("transient"), 5, 2, 1.0 / 6},
		{"(6 - 4)/7", call("transient"), 6, 2, 2.0 / 7},
		{"(7 - 4)/8, above the draws of 0.3", call("transient"), 7, 2, 3.0 / 8},
		{"refused: a request at once, and no accept", func(t *testing.T) {
			tk, err := th.Admit()
			assert.Equal(t, throttle.Ticket{}, tk)
			stop, isStop := errors.AsType[*pipeline.StopError](err)
			require.True(t, isStop, "want a StopError, got %v", err)
			assert.Equal(t, "throttle", stop.Stage)
			assert.Equal(t, pipeline.DependencyUnavailable, stop.Reason)
			assert.Zero(t, stop.RetryAfter)
		}, 8, 2, 4.0 / 9},
		{"a slice later, nothing is forgotten yet", func(*testing.T) { clock.Advance(10 * time.Second) }, 8, 2, 4.0 / 9},
		{"the draws now read 0.5", func(*testing.T) { draw.set(0.5) }, 8, 2, 4.0 / 9},
		{"OK answers bring it down: (9 - 6)/10", call("ok"), 9, 3, 3.0 / 10},
		{"(10 - 8)/11", call("ok"), 10, 4, 2.0 / 11},
		{"(11 - 10)/12", call("ok"), 11, 5, 1.0 / 12},
		{"accepts outnumber half the requests: 0", call("ok"), 12, 6, 0},
		{"the first slice leaves the window 2 min after it began", func(*testing.T) { clock.Advance(110 * time.Second) }, 4, 4, 0},
		{"and the second 10 s later", func(*testing.T) { clock.Advance(10 * time.Second) }, 0, 0, 0},
	} {
		step.run(t)
		requests, accepts := th.Counts()
		assert.Equal(t, step.requests, requests, "step %d (%s): requests", i+1, step.do)
		assert.Equal(t, step.accepts, accepts, "step %d (%s): accepts", i+1, step.do)
		assert.InDelta(t, step.probability, th.RejectionProbability(), 1e-15, "step %d (%s): probability", i+1, step.do)
	}
}

func TestAnAttemptRecordedAfterItsSliceLeftCountsNothing(t *testing.T) {
	clock := clockwork.NewFakeClock()
	th := mustNew(t, throttle.Config{Clock: clock, Window: time.Minute, Buckets: 6})
	old, err := th.Admit()
	require.NoError(t, err)
	clock.Advance(50 * time.Second) // the sixth slice: the first is still inside
	recent, err := th.Admit()
	require.NoError(t, err)
	th.Record(old, verdicts["transient"])
	requests, _ := th.Counts()
	assert.Equal(t, 1, requests, "counted in the slice of its admission, still inside")

	clock.Advance(10 * time.Second)
	requests, _ = th.Counts()
	assert.Equal(t, 0, requests, "the slice of its admission has left")
	old, err = th.Admit()
	require.NoError(t, err)
	clock.Advance(time.Minute)
	th.Record(recent, verdicts["transient"])
	th.Record(old, verdicts["transient"])
	requests, accepts := th.Counts()
	assert.Equal(t, 0, requests, "an attempt answered after its slice left counts for nothing")
	assert.Equal(t, 0, accepts)
}

func TestReadingChangesNothing(t *testing.T) {
	clock := clockwork.NewFakeClock()
	th := mustNew(t, throttle.Config{Clock: clock, Rand: neverRefuse})
	for _, v := range []string{"transient", "ok", "transient", "transient"} {
		tk, err := th.Admit()
		require.NoError(t, err)
		th.Record(tk, verdicts[v])
	}
	requests, accepts := th.Counts()
	p := th.RejectionProbability()
	clock.Advance(3 * time.Minute)
	assert.Zero(t, th.RejectionProbability(), "read after the window slid past")
	clock.Advance(-3 * time.Minute) // a clock that goes back: the throttle's time does not
	r2, a2 := th.Counts()
	assert.Equal(t, requests, r2, "reading did not drop the slices it read past")
	assert.Equal(t, accepts, a2)
	assert.Equal(t, p, th.RejectionProbability())
}

// capacity is a dependency that accepts at most perSecond calls in each
// second of its clock and refuses the rest, Throttled: an overloaded one.
type capacity struct {
	clock     *clockwork.FakeClock
	perSecond int
	second    time.Time
	served    int
}

func (c *capacity) answer() outcome.Verdict {
	if now := c.clock.Now().Truncate(time.Second); !now.Equal(c.second) {
		c.second, c.served = now, 0
	}
	if c.served >= c.perSecond {
		return outcome.Verdict{Kind: outcome.Throttled}
	}
	c.served++
	return outcome.Verdict{}
}

// TestTheClientSendsAboutKTimesWhatTheDependencyAccepts offers 100 calls a
// second to a dependency that accepts 10 a second and throttles the rest.
// Once the window has filled, the throttle lets through about K times what
// the dependency accepts: where (requests - K × accepts) / (requests + 1)
// equals the share it refuses.
func TestTheClientSendsAboutKTimesWhatTheDependencyAccepts(t *testing.T) {
	for _, k := range []float64{2, 3, 5} {
		clock := clockwork.NewFakeClock()
		th := mustNew(t, throttle.Config{K: k, Clock: clock, Rand: rand.NewPCG(1, uint64(k))})
		dep := &capacity{clock: clock, perSecond: 10}
		const offered, minutes = 100, 6
		sent := 0
		for i := range minutes * 60 * offered {
			clock.Advance(time.Second / offered)
			tk, err := th.Admit()
			if err != nil {
				continue
			}
			if i >= (minutes-2)*60*offered { // the last two minutes
				sent++
			}
			th.Record(tk, dep.answer())
		}
		perSecond := float64(sent) / 120
		assert.InEpsilon(t, k*10, perSecond, 0.1, "K %v: sent %.1f calls a second", k, perSecond)
		t.Logf("K %v: sent %.1f calls a second to a dependency that accepts 10; probability %.3f", k, perSecond, th.RejectionProbability())
	}
}

// TestTheCapBoundsTheRefusals has a dependency refuse everything: the
// probability climbs to MaxRejection and no higher, and a share of the
// attempts, 1 - MaxRejection, still goes out.
func TestTheCapBoundsTheRefusals(t *testing.T) {
	for _, maxRejection := range []float64{0.5, throttle.DefaultMaxRejection, 0.99} {
		clock := clockwork.NewFakeClock()
		th := mustNew(t, throttle.Config{MaxRejection: maxRejection, Clock: clock, Rand: rand.NewPCG(2, 3)})
		sent := 0
		const calls = 20000
		for i := range calls {
			clock.Advance(10 * time.Millisecond)
			tk, err := th.Admit()
			if err != nil {
				continue
			}
			if i >= calls/2 {
				sent++
			}
			th.Record(tk, verdicts["throttled"])
		}
		assert.Equal(t, maxRejection, th.RejectionProbability())
		n := float64(calls / 2)
		sd := math.Sqrt(n * maxRejection * (1 - maxRejection))
		assert.InDelta(t, (1-maxRejection)*n, float64(sent), 4*sd, "cap %v: %d of the last %v attempts sent", maxRejection, sent, n)
	}
}

// TestAFixedShareOfFailures has a dependency fail a fixed share of the calls
// it is sent, whatever the load: the rule then has a threshold. Below
// 1 - 1/K of failures (a half, at K 2) K times the accepts outnumber the
// requests, and nothing is refused once the window holds enough calls.
// Above it, each refusal is a request that is not accepted, the accepts'
// share falls further, and the probability climbs to the cap: slowly near
// the threshold (at 55% of failures it settles there after 16.5 minutes, at
// 60% after under 7), at once far from it (about a second at 80%).
func TestAFixedShareOfFailures(t *testing.T) {
	for _, tc := range []struct {
		failures float64
		want     float64
	}{
		{0.4, 0},
		{0.45, 0},
		{0.55, throttle.DefaultMaxRejection},
		{0.6, throttle.DefaultMaxRejection},
		{0.8, throttle.DefaultMaxRejection},
	} {
		clock := clockwork.NewFakeClock()
		th := mustNew(t, throttle.Config{Clock: clock, Rand: rand.NewPCG(4, 5)})
		dep := rand.New(rand.NewPCG(6, 7))
		var since time.Duration          // since when the probability has been what it ends at
		for tick := range 20 * 60 * 10 { // 20 minutes at 100 calls a second, ten a tick
			clock.Advance(100 * time.Millisecond)
			for range 10 {
				tk, err := th.Admit()
				if err != nil {
					continue
				}
				v := verdicts["ok"]
				if dep.Float64() < tc.failures {
					v = verdicts["transient"]
				}
				th.Record(tk, v)
			}
			if th.RejectionProbability() != tc.want {
				since = time.Duration(tick+1) * 100 * time.Millisecond
			}
		}
		assert.Equal(t, tc.want, th.RejectionProbability(), "failing %v of the calls", tc.failures)
		t.Logf("failing %v of the calls: probability %v since %v", tc.failures, th.RejectionProbability(), since)
	}
}

// TestRecoveryAfterAnOutage calls a dependency 100 times a second: healthy
// for 2 minutes, rejecting everything (429s) for 5, healthy again. It
// reports how much was sent while it was down and how long after it came
// back the throttle refuses nothing again, for six caps. Refusals count as
// requests, so a healthy dependency's accepts outweigh them only gradually:
// the share that goes out grows geometrically from 1 - MaxRejection, and the
// lower the cap the sooner the throttle lets go, at the price of more load
// on the dependency while it is down.
func TestRecoveryAfterAnOutage(t *testing.T) {
	for _, tc := range []struct {
		maxRejection float64
		sentDown     int           // of the 30,000 calls made while it was down, about
		recovered    time.Duration // after it came back, about
	}{
		{0.5, 18500, 99 * time.Second},
		{0.8, 12300, 161 * time.Second},
		{throttle.DefaultMaxRejection, 10400, 210 * time.Second},
		{0.95, 9500, 269 * time.Second},
		{0.99, 8700, 380 * time.Second},
		{1, 8500, 623 * time.Second},
	} {
		clock := clockwork.NewFakeClock()
		th := mustNew(t, throttle.Config{MaxRejection: tc.maxRejection, Clock: clock, Rand: rand.NewPCG(0, 9)})
		const down, up = 2 * time.Minute, 7 * time.Minute
		sentDown := 0
		var elapsed time.Duration
		for elapsed < up || th.RejectionProbability() > 0 {
			require.Less(t, elapsed, time.Hour)
			clock.Advance(100 * time.Millisecond) // ten calls a tick: a fake clock is slow under -race
			elapsed += 100 * time.Millisecond
			for range 10 {
				tk, err := th.Admit()
				if err != nil {
					continue
				}
				if elapsed >= down && elapsed < up {
					sentDown++
					th.Record(tk, verdicts["throttled"])
				} else {
					th.Record(tk, verdicts["ok"])
				}
			}
		}
		recovered := elapsed - up
		t.Logf("cap %v: sent %d of 30000 while down; refusing nothing %v after it came back", tc.maxRejection, sentDown, recovered)
		assert.InEpsilon(t, tc.sentDown, sentDown, 0.05, "cap %v: sent while down", tc.maxRejection)
		assert.InEpsilon(t, tc.recovered.Seconds(), recovered.Seconds(), 0.1, "cap %v: recovered after %v", tc.maxRejection, recovered)
	}
}

// TestAThrottleIsTimedOnItsCallersClock builds a throttle on real time
// outside a synctest bubble and uses it inside one: the counts it gathers
// there age out of its window on the bubble's clock. (Timed from New, every
// reading in the bubble was 236,000 hours before the window, and the counts
// never aged.)
func TestAThrottleIsTimedOnItsCallersClock(t *testing.T) {
	th, err := throttle.New(throttle.Config{Window: time.Minute, Buckets: 6, Rand: neverRefuse})
	require.NoError(t, err)
	synctest.Test(t, func(t *testing.T) {
		for range 10 {
			tk, err := th.Admit()
			require.NoError(t, err)
			th.Record(tk, outcome.Verdict{Kind: outcome.Throttled})
		}
		requests, accepts := th.Counts()
		assert.Equal(t, 10, requests)
		assert.Zero(t, accepts)
		assert.Positive(t, th.RejectionProbability())
		time.Sleep(time.Minute + time.Second)
		requests, _ = th.Counts()
		assert.Zero(t, requests, "a window later, the counts have aged out")
	})
}
