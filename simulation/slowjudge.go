package simulation

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline/internal/breakerconf"
	"github.com/resilience-go/pipeline/latency"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// SlowJudge is an instrument: it judges every attempt of a process slow or not
// by a threshold of its choosing, and keeps the slow fraction of a trip window
// like the breaker's, without changing how any call goes. It shows what a
// breaker's slow-call trip sees: the process's own breaker's (the zero value), or
// one the breaker does not offer, such as a threshold that follows a live
// quantile of recent latency.
//
// The judge sees exactly the samples the breaker's trip window sees: the
// evidence samples (successes and Transient failures, with the attempt's
// duration) recorded while the process's breaker is Closed, or all of them
// without a breaker; and its window is emptied whenever the breaker changes
// state, as the breaker's is. With a recovery ramp (breaker.Config.Recovery),
// the attempts a Recovering breaker records are not samples, slow or not; the
// one that finds the ramp run out closes the breaker and is the first sample
// of its emptied window. Its trip window, minimum and ratio are the
// breaker's: the process's Breaker config's TripWindow, WindowBuckets,
// MinimumCalls and SlowCallRatio, with their defaults (30 s in 10 buckets, 20
// samples, 0.5), or the defaults without a breaker. A sample is slow when its
// threshold is armed and it took longer than the threshold; like the breaker,
// the judge reads the threshold before the sample joins any measurement.
//
// The report counts what the judges saw (Report.SlowTrip, PeakSlowFraction,
// and per second Judged, Slow, SlowFraction and Threshold).
type SlowJudge struct {
	// Quantile, when above 0, makes the threshold the Quantile of the recent
	// latency of the process's successful attempts: a real *latency.Estimator of
	// the process's own, on the run's clock, fed with every success the judge
	// sees, after judging it. It must lie in (0, 1].
	Quantile float64
	// Window is how far back the estimator looks. Zero means
	// [latency.DefaultWindow] (30 s, the hedge's estimator); it must not be
	// negative. It matters only with Quantile.
	Window time.Duration
	// MinSamples is how many successes the estimator must hold before the
	// threshold is armed; until then no sample is slow. Zero means 20, the
	// breaker's default; it must not be negative. It matters only with
	// Quantile.
	MinSamples int
	// Threshold, when above 0, is a constant threshold. It must not be negative,
	// and not be set with Quantile.
	Threshold time.Duration
}

// The rules a SlowJudge can judge by.
const (
	ruleBreaker  = iota // the breaker's own effective threshold
	ruleQuantile        // a live quantile of an estimator
	ruleConstant        // a constant
)

func (j SlowJudge) rule() int {
	switch {
	case j.Quantile != 0:
		return ruleQuantile
	case j.Threshold != 0:
		return ruleConstant
	}
	return ruleBreaker
}

// String describes the judge's threshold, such as "p99 of the last 30s".
func (j SlowJudge) String() string {
	switch j.rule() {
	case ruleQuantile:
		return fmt.Sprintf("p%s of the last %s", number(100*j.Quantile), seconds(cmp.Or(j.Window, latency.DefaultWindow)))
	case ruleConstant:
		return "constant " + millis(j.Threshold)
	}
	return "the breaker's threshold"
}

// validate reports every setting of j that cannot work; breaker says whether
// the process has a breaker, which the zero judge reads.
func (j *SlowJudge) validate(breaker bool) error {
	var errs []error
	if math.IsNaN(j.Quantile) || j.Quantile < 0 || j.Quantile > 1 {
		errs = append(errs, fmt.Errorf("simulation: Client.SlowJudge.Quantile must lie in (0, 1] (0 means none), got %v", j.Quantile))
	}
	if j.Threshold < 0 {
		errs = append(errs, fmt.Errorf("simulation: Client.SlowJudge.Threshold must not be negative (0 means none), got %v", j.Threshold))
	}
	if j.Quantile != 0 && j.Threshold != 0 {
		errs = append(errs, fmt.Errorf("simulation: Client.SlowJudge.Quantile (%v) and Client.SlowJudge.Threshold (%v) must not both be set", j.Quantile, j.Threshold))
	}
	if j.MinSamples < 0 {
		errs = append(errs, fmt.Errorf("simulation: Client.SlowJudge.MinSamples must not be negative, got %d", j.MinSamples))
	}
	if err := (latency.Config{Window: j.Window}).Validate(); err != nil {
		errs = append(errs, fmt.Errorf("simulation: Client.SlowJudge: %w", err))
	}
	if j.Quantile == 0 && j.Threshold == 0 && !breaker {
		errs = append(errs, errors.New("simulation: Client.Breaker is required by a Client.SlowJudge with neither Quantile nor Threshold (it judges by the breaker's threshold), got nil"))
	}
	return errors.Join(errs...)
}

// judge is one process's SlowJudge at work: its threshold and its copy of the
// breaker's trip window.
type judge struct {
	rule       int
	threshold  time.Duration // ruleConstant
	constant   time.Duration // ruleBreaker: the breaker's SlowCallThreshold, 0 for none
	est        *latency.Estimator
	quantile   float64
	minSamples int
	minimum    int     // the breaker's MinimumCalls
	ratio      float64 // the breaker's SlowCallRatio
	window     slowWindow
	// ramping says the breaker's stored state is Recovering, as its last
	// transition told; closing, that the judge has emptied its window for the
	// closing of a ramp that has run out, which the breaker is about to
	// announce.
	ramping, closing bool
}

// newJudge returns the judging j configures, with an estimator on clock when
// it follows a quantile, and the trip window of bc (nil: the defaults); nil
// when j is nil.
func newJudge(j *SlowJudge, bc *breaker.Config, clock clockwork.Clock) (*judge, error) {
	if j == nil {
		return nil, nil
	}
	var b breaker.Config
	if bc != nil {
		b = *bc
	}
	span := cmp.Or(b.TripWindow, breakerconf.DefaultTripWindow)
	g := &judge{
		rule:       j.rule(),
		threshold:  j.Threshold,
		quantile:   j.Quantile,
		minSamples: cmp.Or(j.MinSamples, breakerconf.DefaultSlowCallsMinimumSamples),
		minimum:    cmp.Or(b.MinimumCalls, breakerconf.DefaultMinimumCalls),
		ratio:      cmp.Or(b.SlowCallRatio, breakerconf.DefaultSlowCallRatio),
		constant:   b.SlowCallThreshold,
	}
	g.window = newSlowWindow(span, cmp.Or(b.WindowBuckets, breakerconf.DefaultWindowBuckets))
	if g.rule == ruleQuantile {
		est, err := latency.New(latency.Config{Window: j.Window, Clock: clock})
		if err != nil {
			return nil, err
		}
		g.est = est
	}
	return g, nil
}

// judgement is what a judge made of one sample.
type judgement struct {
	slow      bool
	threshold time.Duration // 0: not armed
	fraction  float64       // the trip window's slow fraction after the sample
	counted   bool          // the window holds at least MinimumCalls samples
	trips     bool          // the fraction reaches the ratio
}

// judge judges the attempt that ended at now after d with verdict v, whose
// breaker b (nil: none) is about to record it, and returns what it made of it;
// ok is false when the sample is not one the breaker's trip window would see.
func (g *judge) judge(now time.Duration, v outcome.Verdict, d time.Duration, b *breaker.Breaker) (j judgement, ok bool) {
	failure := v.Failure()
	success := v.Kind == outcome.OK && !v.SelfImposed && !v.Canceled
	if !failure && !success || b != nil && b.State() != breaker.Closed {
		return judgement{}, false
	}
	if b != nil && g.ramping {
		// A recovery ramp that has run out reads Closed: recording this sample
		// closes the breaker, which empties its trip window, and then counts
		// the sample in it. Empty ours first, and skip the emptying that the
		// closing's transition would otherwise cause after the sample.
		g.window.reset()
		g.ramping, g.closing = false, true
	}
	switch g.rule {
	case ruleConstant:
		j.threshold = g.threshold
	case ruleQuantile:
		if q, n := g.est.Quantile(now, g.quantile); n >= g.minSamples {
			j.threshold = q
		}
	default:
		j.threshold = b.Snapshot().SlowCallThreshold
	}
	j.slow = j.threshold > 0 && d > j.threshold
	if success && g.est != nil {
		g.est.Record(now, d)
	}
	calls, slow := g.window.add(now, j.slow)
	j.fraction = ratio(slow, calls)
	j.counted = calls >= g.minimum
	j.trips = j.counted && slow > 0 && j.fraction >= g.ratio
	return j, true
}

// transition follows the breaker's transition tr: the breaker empties its trip
// window whenever it changes state, and so does the judge, unless it did so
// already for a ramp's closing (see judge).
func (g *judge) transition(tr breaker.Transition) {
	g.ramping = tr.To == breaker.Recovering
	if g.closing {
		g.closing = false
		if tr.From == breaker.Recovering && tr.To == breaker.Closed {
			return
		}
	}
	g.window.reset()
}

// slowWindow is the breaker's trip window, counting samples and slow samples:
// bucket k covers [k*width, (k+1)*width) of the run's time, and the window at
// time t is the bucket holding t and the ones before it, up to the number of
// buckets. It slides one bucket at a time, when a sample is added.
type slowWindow struct {
	width       time.Duration
	head        int64 // absolute index of the newest bucket
	calls, slow []int
	total       [2]int // calls, slow
}

func newSlowWindow(span time.Duration, n int) slowWindow {
	return slowWindow{width: span / time.Duration(n), calls: make([]int, n), slow: make([]int, n)}
}

// add records one sample at now and returns the window's counts after it.
func (w *slowWindow) add(now time.Duration, slow bool) (calls, slowCalls int) {
	n := int64(len(w.calls))
	if k := int64(now / w.width); k > w.head {
		for i := w.head + 1; i <= min(k, w.head+n); i++ {
			w.total[0] -= w.calls[i%n]
			w.total[1] -= w.slow[i%n]
			w.calls[i%n], w.slow[i%n] = 0, 0
		}
		w.head = k
	}
	w.calls[w.head%n]++
	w.total[0]++
	if slow {
		w.slow[w.head%n]++
		w.total[1]++
	}
	return w.total[0], w.total[1]
}

// reset forgets every sample.
func (w *slowWindow) reset() {
	clear(w.calls)
	clear(w.slow)
	w.total = [2]int{}
}

// judged counts a sample a slow judge judged, at the time it ended.
func (rec *recorder) judged(at time.Duration, j judgement) {
	s := rec.second(at)
	rec.r.Judged++
	s.Judged++
	if j.slow {
		rec.r.Slow++
		s.Slow++
	}
	if j.counted {
		s.SlowFraction = max(s.SlowFraction, j.fraction)
		rec.r.PeakSlowFraction = max(rec.r.PeakSlowFraction, j.fraction)
	}
	if j.trips && !rec.r.SlowTrip {
		rec.r.SlowTrip, rec.r.SlowTripAt = true, at
	}
	if j.threshold > 0 {
		i := int(at / time.Second)
		for len(rec.armed) <= i {
			rec.thresholds, rec.armed = append(rec.thresholds, 0), append(rec.armed, 0)
		}
		rec.thresholds[i] += j.threshold
		rec.armed[i]++
	}
}
