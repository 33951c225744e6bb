package simulation

import (
	"container/heap"
	"math"
	"slices"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/internal/breakerconf"
	"github.com/resilience-go/pipeline/internal/discrete"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// recoveredAvailability is the availability a second must reach for the
// dependency to count as recovered (see [Report].TimeToRecover).
const recoveredAvailability = 0.95

// probeBucket is the width of the buckets of [Report].ProbeSeries.
const probeBucket = 100 * time.Millisecond

// Report is what a run cost. Calls are counted once, by how they ended:
// Offered = Served + RefusedByBreaker + RefusedByBudget + RefusedByLimit +
// Failed.
type Report struct {
	// Name, Seed, Duration, Processes, Rate, Arrivals and Steps describe the
	// run: the Config's fields, with Processes at least 1 and Steps a copy of
	// the Config's.
	Name      string
	Seed      uint64
	Duration  time.Duration
	Processes int
	Rate      float64
	Arrivals  Arrivals
	Steps     []Step

	// Offered is the number of calls the processes offered.
	Offered int
	// Served is the number of calls that succeeded (some attempt was OK).
	Served int
	// RefusedByBreaker is the number of calls stopped by a breaker's refusal,
	// of their first attempt or of a retry, or by a throttle's
	// (Client.Throttle), which stands where the breaker does.
	RefusedByBreaker int
	// ThrottleRefusals is the number of attempts the throttle refused.
	ThrottleRefusals int
	// RefusedByBudget is the number of calls whose retry the budget could not
	// pay for.
	RefusedByBudget int
	// RefusedByLimit is the number of calls the processes' limit refused
	// (Client.Limit).
	RefusedByLimit int
	// Failed is the number of other unsuccessful calls: attempts exhausted,
	// deadline reached, or a permanent failure. TimedOut counts those of
	// them whose last attempt the client cut at its timeout (the attempt
	// timeout, or what was left of the deadline).
	Failed, TimedOut int
	// Availability is Served / Offered.
	Availability float64

	// Attempts is the number of attempts that reached the dependency (refused
	// attempts are not counted). Each hedge counts as an attempt: it is one more
	// request the dependency serves.
	Attempts int
	// Amplification is Attempts / Offered: the load multiplier on the dependency.
	Amplification float64
	// WorstSecond is the second (counted from 0) with the largest ratio of
	// attempts started in it to calls offered in it, and WorstAmplification
	// that ratio. Only seconds in which calls were offered count.
	WorstSecond        int
	WorstAmplification float64
	// Faults are the scheduled fault intervals of the dependency model.
	Faults []Interval
	// FaultAmplification is the attempts started during a fault over the calls
	// offered during one: the load multiplier on the failing dependency. It is 0
	// when the model has no faults.
	FaultAmplification float64

	// P50, P90 and P99 are quantiles (nearest rank) of the end-to-end latency of
	// served calls, from the offer to the successful attempt's end, backoffs and
	// failed attempts included. They are 0 when no call was served.
	P50, P90, P99 time.Duration

	// Hedging is whether the processes hedged (Client.Hedge was set).
	// HedgesSent is the number of hedges sent to the dependency (copies of an
	// attempt after its first; they are counted in Attempts too), HedgesWon the
	// number of attempts whose result came from a hedge, and HedgesSkipped the
	// number of hedges that fell due but were not sent because the breaker was
	// under pressure or the budget could not pay.
	Hedging       bool
	HedgesSent    int
	HedgesWon     int
	HedgesSkipped int
	// HedgeDelay is the median of the delays the hedges were sent after (the
	// estimator's quantile, or MinDelay), 0 when none was sent: where the
	// hedge delay settled.
	HedgeDelay time.Duration

	// BreakerOpens is the number of transitions to Open, over every process.
	// FirstOpen is when the first of them happened, on the run's time, and
	// FirstOpenCause why; both are zero when no breaker opened.
	BreakerOpens   int
	FirstOpen      time.Duration
	FirstOpenCause breaker.Cause
	// Ramping is whether the breakers have a recovery ramp
	// (Client.Breaker.Recovery is set). Ramps is the number of ramps they
	// started (transitions to Recovering), RampsDone the number that closed
	// their breaker, and RampsFailed the number that re-opened it; a ramp still
	// running at the end of the run is neither.
	Ramping                       bool
	Ramps, RampsDone, RampsFailed int
	// Phases lists how every half-open phase ended (each transition from
	// HalfOpen), over every process, in order.
	Phases []PhaseEnd
	// Probes is the number of half-open probes admitted, over every process.
	Probes int
	// ProbeSeries counts probes admitted per 100 ms, and
	// PeakProbes is its largest entry, in the bucket starting at PeakProbesAt.
	ProbeSeries  []int
	PeakProbes   int
	PeakProbesAt time.Duration

	// TimeToRecover is measured from the end of the last fault (the latest To
	// of Faults) to the start of the first whole second that starts at or
	// after it, has calls offered in it, and has at least
	// 95% of them served. Recovered is false, and
	// TimeToRecover 0, when no second qualifies, the model has no faults, or a
	// fault never ends. Its resolution is one second.
	Recovered     bool
	TimeToRecover time.Duration
	// TimeToStable is measured like TimeToRecover, to the start of the first
	// such second from which every later second with calls offered in it also
	// has at least 95% of them served: the recovery that lasted. Stable is false,
	// and TimeToStable 0, when no second qualifies (or Recovered is false).
	Stable       bool
	TimeToStable time.Duration

	// SlowJudge is a copy of Client.SlowJudge, nil when the processes had none.
	// With one, SlowCallRatio is the slow fraction its trip window trips at (the
	// breaker's SlowCallRatio, default 0.5); Judged is the number of samples the
	// judges judged, and Slow those they found slow; PeakSlowFraction is the
	// highest slow fraction any judge's trip window held with at least
	// MinimumCalls samples in it; SlowTrip is whether one reached SlowCallRatio
	// (the moment the slow-call trip it judges would open a breaker), first at
	// SlowTripAt on the run's time (0 when SlowTrip is false).
	SlowJudge        *SlowJudge
	SlowCallRatio    float64
	Judged, Slow     int
	PeakSlowFraction float64
	SlowTrip         bool
	SlowTripAt       time.Duration

	// Limit is a copy of Client.Limit, nil when the processes had none.
	// With one, Limiter says what limited them ("bulkhead of 16", "adaptive
	// limit", "no limit"), and Levels counts the calls of each criticality
	// level apart, indexed by level (Levels[criticality.Critical]);
	// Levels[0] is the unmarked calls.
	Limit   *Limit
	Limiter string
	Levels  [criticality.Levels + 1]LevelCount

	// Seconds is the run second by second, from 0 to the end of the run or of
	// the last attempt, whichever is later, rounded up to a whole second.
	Seconds []Second

	// latencies are the end-to-end latencies of the served calls, sorted,
	// and servedOffers the times the served calls were offered, sorted.
	latencies    []time.Duration
	servedOffers []time.Duration
}

// ServedIn returns the number of calls offered in [from, to), on the run's
// time, that were served, however long after they were offered. It counts
// calls exactly, by the instant each was offered, so its bounds need not be
// whole seconds.
func (r *Report) ServedIn(from, to time.Duration) int {
	lo, _ := slices.BinarySearch(r.servedOffers, from)
	hi, _ := slices.BinarySearch(r.servedOffers, to)
	return max(hi-lo, 0)
}

// Latency returns the q-th quantile (nearest rank) of the end-to-end latency
// of served calls, as P50, P90 and P99 are computed; q is clamped to [0, 1]. It
// returns 0 when no call was served.
func (r *Report) Latency(q float64) time.Duration {
	return rank(r.latencies, min(max(q, 0), 1))
}

// LevelCount is the count of one criticality level's calls in a run with a
// limit (Report.Levels).
type LevelCount struct {
	Offered, Served, Refused, Failed, TimedOut int
	// P99 is the nearest-rank 99th percentile of the end-to-end latency of
	// the level's served calls.
	P99 time.Duration

	latencies []time.Duration
}

// refusal says which of our stages refused a call.
type refusal uint8

const (
	byBreaker refusal = iota + 1
	byBudget
	byLimit
)

// maxPrealloc bounds how many served calls the recorder makes room for at
// the start of a run.
const maxPrealloc = 1 << 16

// recorder accumulates a run's report.
type recorder struct {
	r         Report
	latencies []time.Duration
	offers    []time.Duration // when the served calls were offered
	delays    []time.Duration // of the hedges sent
	// offeredInFault and attemptsInFault feed FaultAmplification.
	offeredInFault, attemptsInFault int
	// thresholds sums, per second, the armed thresholds judged against, and
	// armed counts them, for Second.Threshold.
	thresholds []time.Duration
	armed      []int
	// ramps sums, per second, what the ramps offered an attempt were
	// admitting, for Second.Ramping and its means.
	ramps []rampSum
	// With a limit: the latencies of the served calls by the second they
	// were offered, for Second.P50; when each attempt the dependency holds
	// ends, earliest first, for Second.Held; and the processes' limits
	// summed, as their latest readings had them, for Second.Limit.
	secLat      [][]time.Duration
	holds       freeAt
	limits      int
	startLimits int // limits as the run started
	// onEvent, if set, sees every breaker event after it is counted. Tests
	// use it.
	onEvent func(pipeline.Event)
}

func newRecorder(c Config, faults []Interval) *recorder {
	rec := &recorder{r: Report{
		Name: c.Name, Seed: c.Seed, Duration: c.Duration, Processes: c.processes(), Rate: c.Rate,
		Arrivals: c.Arrivals, Steps: slices.Clone(c.Steps),
		Faults:  faults,
		Hedging: c.Client.Hedge != nil,
		Ramping: c.Client.Breaker != nil && c.Client.Breaker.Recovery != nil,
		Seconds: make([]Second, 0, int(c.Duration/time.Second)+2),
	}}
	// Room for every call served, as far as a modest bound goes: the served
	// calls' latencies and offer times are kept to the end of the run.
	calls := min(c.Duration.Seconds()*c.Rate*float64(c.processes()), maxPrealloc)
	if calls > 0 {
		rec.latencies = make([]time.Duration, 0, int(calls)+1)
		rec.offers = make([]time.Duration, 0, int(calls)+1)
	}
	if l := c.Client.Limit; l != nil {
		copied := *l
		rec.r.Limit, rec.r.Limiter = &copied, l.name()
	}
	if j := c.Client.SlowJudge; j != nil {
		copied := *j
		rec.r.SlowJudge = &copied
		rec.r.SlowCallRatio = breakerconf.DefaultSlowCallRatio
		if b := c.Client.Breaker; b != nil && b.SlowCallRatio != 0 {
			rec.r.SlowCallRatio = b.SlowCallRatio
		}
	}
	return rec
}

// second returns the entry of the second containing t.
func (rec *recorder) second(t time.Duration) *Second {
	i := int(t / time.Second)
	for len(rec.r.Seconds) <= i {
		rec.r.Seconds = append(rec.r.Seconds, Second{})
	}
	return &rec.r.Seconds[i]
}

// until makes Seconds cover [0, end), end rounded up to a whole second.
func (rec *recorder) until(end time.Duration) {
	for n := int((end + time.Second - 1) / time.Second); len(rec.r.Seconds) < n; {
		rec.r.Seconds = append(rec.r.Seconds, Second{})
	}
}

// inFault reports whether t lies in one of the model's faults.
func (rec *recorder) inFault(t time.Duration) bool {
	for _, f := range rec.r.Faults {
		if f.Contains(t) {
			return true
		}
	}
	return false
}

func (rec *recorder) offer(at time.Duration) {
	rec.r.Offered++
	rec.second(at).Offered++
	if rec.inFault(at) {
		rec.offeredInFault++
	}
}

func (rec *recorder) attempt(at time.Duration, probe bool) {
	rec.r.Attempts++
	rec.second(at).Attempts++
	if rec.inFault(at) {
		rec.attemptsInFault++
	}
	if probe {
		rec.r.Probes++
		rec.second(at).Probes++
		i := int(at / probeBucket)
		for len(rec.r.ProbeSeries) <= i {
			rec.r.ProbeSeries = append(rec.r.ProbeSeries, 0)
		}
		rec.r.ProbeSeries[i]++
	}
}

func (rec *recorder) hedgeSent(at, delay time.Duration) {
	rec.r.HedgesSent++
	rec.second(at).Hedges++
	rec.delays = append(rec.delays, delay)
}

func (rec *recorder) hedgeWon() { rec.r.HedgesWon++ }

func (rec *recorder) hedgeSkipped() { rec.r.HedgesSkipped++ }

// served counts a call of level l offered at offered and served after
// latency.
func (rec *recorder) served(offered, latency time.Duration, l criticality.Level) {
	rec.r.Served++
	sec := rec.second(offered)
	sec.Served++
	rec.latencies = append(rec.latencies, latency)
	rec.offers = append(rec.offers, offered)
	if rec.r.Limit != nil {
		sec.LevelServed[l]++
		lv := &rec.r.Levels[l]
		lv.Served++
		lv.latencies = append(lv.latencies, latency)
		i := int(offered / time.Second)
		for len(rec.secLat) <= i {
			rec.secLat = append(rec.secLat, nil)
		}
		rec.secLat[i] = append(rec.secLat[i], latency)
	}
}

// refused counts a call of level l offered at offered and refused by one
// of our stages.
func (rec *recorder) refused(offered time.Duration, by refusal, l criticality.Level) {
	sec := rec.second(offered)
	switch by {
	case byBreaker:
		rec.r.RefusedByBreaker++
		sec.RefusedByBreaker++
	case byBudget:
		rec.r.RefusedByBudget++
		sec.RefusedByBudget++
	case byLimit:
		rec.r.RefusedByLimit++
		sec.RefusedByLimit++
	}
	if rec.r.Limit != nil {
		rec.r.Levels[l].Refused++
	}
}

// failed counts a call of level l offered at offered that failed, cut at
// the client's timeout if cut is set.
func (rec *recorder) failed(offered time.Duration, cut bool, l criticality.Level) {
	rec.r.Failed++
	sec := rec.second(offered)
	sec.Failed++
	if cut {
		rec.r.TimedOut++
		sec.TimedOut++
	}
	if rec.r.Limit != nil {
		rec.r.Levels[l].Failed++
		if cut {
			rec.r.Levels[l].TimedOut++
		}
	}
}

// levelOffer counts a call of level l offered to a limit.
func (rec *recorder) levelOffer(l criticality.Level) { rec.r.Levels[l].Offered++ }

// held notes that at now the dependency takes an attempt it holds until
// end, for Second.Held: the most it holds at once in the second.
func (rec *recorder) held(now, end time.Duration) {
	for len(rec.holds) > 0 && rec.holds[0] <= now {
		heap.Pop(&rec.holds)
	}
	heap.Push(&rec.holds, end)
	sec := rec.second(now)
	sec.Held = max(sec.Held, len(rec.holds))
}

// limitNow notes p's limit at now, as a call of p's ended, in the sum of
// the processes' limits the second ends with (Second.Limit).
func (rec *recorder) limitNow(now time.Duration, p *process) {
	l := p.limit.limit()
	rec.limits += l - p.lastLimit
	p.lastLimit = l
	rec.second(now).Limit = rec.limits
}

// onBreakerEvent is every breaker's Config.OnEvent: it counts opens, noting
// the first, and ramps.
func (rec *recorder) onBreakerEvent(e pipeline.Event) {
	if t, ok := e.(breaker.Transition); ok {
		if t.From == breaker.HalfOpen {
			rec.r.Phases = append(rec.r.Phases, PhaseEnd{At: t.At.Sub(discrete.Epoch), To: t.To, Cause: t.Cause})
		}
		switch {
		case t.To == breaker.Open:
			if rec.r.BreakerOpens == 0 {
				rec.r.FirstOpen, rec.r.FirstOpenCause = t.At.Sub(discrete.Epoch), t.Cause
			}
			rec.r.BreakerOpens++
			if t.From == breaker.Recovering {
				rec.r.RampsFailed++
			}
		case t.To == breaker.Recovering:
			rec.r.Ramps++
		case t.From == breaker.Recovering && t.To == breaker.Closed:
			rec.r.RampsDone++
		}
	}
	if rec.onEvent != nil {
		rec.onEvent(e)
	}
}

// report computes the derived figures and returns the report.
func (rec *recorder) report() *Report {
	r := &rec.r
	r.Availability = ratio(r.Served, r.Offered)
	r.Amplification = ratio(r.Attempts, r.Offered)
	r.FaultAmplification = ratio(rec.attemptsInFault, rec.offeredInFault)
	for i, s := range r.Seconds {
		if a := ratio(s.Attempts, s.Offered); s.Offered > 0 && a > r.WorstAmplification {
			r.WorstSecond, r.WorstAmplification = i, a
		}
	}
	for i, n := range r.ProbeSeries {
		if n > r.PeakProbes {
			r.PeakProbes, r.PeakProbesAt = n, time.Duration(i)*probeBucket
		}
	}
	for i, n := range rec.armed {
		if n > 0 {
			r.Seconds[i].Threshold = rec.thresholds[i] / time.Duration(n)
		}
	}
	rec.rampMeans()
	if r.Limit != nil {
		rec.limitSeries()
	}
	slices.Sort(rec.latencies)
	r.latencies = rec.latencies
	slices.Sort(rec.offers)
	r.servedOffers = rec.offers
	r.P50, r.P90, r.P99 = r.Latency(0.50), r.Latency(0.90), r.Latency(0.99)
	slices.Sort(rec.delays)
	r.HedgeDelay = rank(rec.delays, 0.5)
	r.Recovered, r.TimeToRecover, r.Stable, r.TimeToStable = recovery(r.Faults, r.Seconds)
	return r
}

// limitSeries completes the figures of a run with a limit: each second's
// limit carried from the one before when no call ended in it, its median
// latency, and each level's p99.
func (rec *recorder) limitSeries() {
	r := &rec.r
	last := rec.startLimits
	for i := range r.Seconds {
		s := &r.Seconds[i]
		if s.Limit == 0 {
			s.Limit = last
		}
		last = s.Limit
		if i < len(rec.secLat) {
			s.P50 = rank(slices.Sorted(slices.Values(rec.secLat[i])), 0.5)
		}
	}
	rec.secLat = nil
	for i := range r.Levels {
		lv := &r.Levels[i]
		slices.Sort(lv.latencies)
		lv.P99 = rank(lv.latencies, 0.99)
		lv.latencies = nil
	}
}

// ratio returns a/b, or 0 when b is 0.
func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// rank returns the q-th quantile of sorted by nearest rank, 0 for none.
func rank(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// PhaseEnd is how one half-open phase ended: when, on the run's time, the
// state it left HalfOpen for, and why.
type PhaseEnd struct {
	At    time.Duration
	To    breaker.State
	Cause breaker.Cause
}
