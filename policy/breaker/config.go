package breaker

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline"
	conf "github.com/resilience-go/pipeline/internal/breakerconf"
)

// MaxDuration is the longest duration any field of a Config may hold, those
// of Recovery, SlowCalls and Failures included: ten years (of 365 days). The
// breaker adds its durations to readings of its clock (a break's end, a probe
// slot's expiry, a window's next slice, a ramp's end) in int64 nanoseconds;
// up to MaxDuration that cannot overflow for the first 280 years of the
// breaker's clock, and no break, window or ramp needs to be longer. The
// counts need no such bound: they are only compared, never added to or
// allocated, except WindowBuckets and HalfOpenProbes, which have their own.
const MaxDuration = 10 * 365 * 24 * time.Hour

// Config configures a [Breaker]. The zero value of every field means its
// documented default, so Config{} is a breaker that opens on any of: 5
// consecutive failures; half of the trip window's calls taking more than 3 times
// the dependency's median latency of the last 5 minutes; or the trip window's
// failure ratio reaching 5 times its failure rate of the last 5 minutes (and at
// least 5%, with at least two failures). It breaks for 15 s (doubling per
// consecutive trip up to 2 min, with equal jitter) and closes at once when its
// fast probes lead its slow ones by 2 (two good probes, if none is slow): the
// recovery ramp is opt-in (Recovery). Impossible values
// (a duration above MaxDuration among them), and measured normals that would
// lose their race against the trip window, are refused by [Config.Validate] and
// [New] with an error naming every field involved and its value.
type Config struct {
	// Name names the breaker, typically after the dependency it guards. Its
	// refusals carry it (pipeline.StopError.Name), and so do the events of a
	// pipeline's breaker stage (pipeline.Source.Name). Empty means unnamed.
	Name string

	// ConsecutiveFailures is how many failures in a row, with no success between
	// them, open a closed breaker. Zero means 5; it
	// must not be negative. Use math.MaxInt to rely on the ratio trips alone.
	ConsecutiveFailures int

	// FailureRatio opens the breaker when failures make up at least this fraction
	// of the evidence samples in the trip window, once there are MinimumCalls of
	// them. Zero means off (the default); otherwise it must lie in (0, 1]. It is
	// also the ceiling of the relative trip point measured by Failures, which can
	// only lower it.
	FailureRatio float64
	// Failures is the relative failure ratio: a trip point measured as a multiple
	// of the dependency's own failure rate. Its zero value is on, with the
	// defaults documented on [Failures].
	Failures Failures
	// MinimumCalls is how many evidence samples the trip window must hold before
	// any ratio trip (absolute, relative or slow-call) may open the breaker. Zero
	// means 20.
	MinimumCalls int
	// TripWindow is how far back the ratio trips look. Zero means
	// 30 s.
	TripWindow time.Duration
	// WindowBuckets is how many buckets divide the trip window. Zero means
	// 10; at most 1000, and TripWindow divided by it must be at least a
	// nanosecond.
	WindowBuckets int

	// SlowCallThreshold makes a sample slow when its duration exceeds it. Zero
	// means off (the default). It is also the ceiling of the threshold measured by
	// SlowCalls, which can only lower it. Probes are judged against
	// ProbeSlowFraction of the effective threshold: slow probes that lead the
	// fast ones by ProbeSlowLead re-open a half-open breaker (or, with
	// Recovery set, start its ramp held back). A slow call during a ramp, by
	// the threshold itself, holds the ramp back.
	SlowCallThreshold time.Duration
	// SlowCallRatio opens the breaker when slow samples make up at least this
	// fraction of the trip window, once there are MinimumCalls samples. It
	// matters when SlowCallThreshold is set or SlowCalls is on (the default).
	// Zero means 0.5; otherwise it must lie in (0, 1].
	SlowCallRatio float64
	// SlowCalls is the measured normal latency: a call is also slow when it takes
	// longer than a multiple of it. Its zero value is on, with the defaults
	// documented on [SlowCalls].
	SlowCalls SlowCalls

	// BreakDuration is the nominal break after the first trip; each consecutive
	// trip doubles it. Zero means 15 s.
	BreakDuration time.Duration
	// MaxBreakDuration caps the nominal break. Zero means 2 min, or
	// BreakDuration if that is longer; it must not be shorter than
	// BreakDuration.
	MaxBreakDuration time.Duration
	// BreakJitter randomises each break once, when the breaker opens: for a
	// nominal break d, JitterEqual serves between d/2 and d, JitterFull
	// between 0 and d, and JitterNone exactly d; no break is ever longer than
	// d. The zero value is JitterEqual.
	BreakJitter Jitter

	// HalfOpenProbes is how many probes a half-open breaker lets run at once.
	// Zero means 1; at most 1000 (New allocates them all, and every half-open
	// admission scans them under the breaker's lock).
	HalfOpenProbes int
	// ProbeSuccesses, ProbeSlowLead and ProbeSlowFraction decide a half-open
	// phase. Each successful probe is fast or slow: slow when it took longer
	// than ProbeSlowFraction times the effective slow-call threshold. Once the
	// phase's fast probes outnumber its slow ones by ProbeSuccesses, the
	// breaker closes (or starts its recovery ramp); once its slow ones
	// outnumber its fast ones by ProbeSlowLead, it re-opens (or starts its
	// ramp held back). A probe that fails re-opens it at once. Probe slots are
	// reused as probes finish, so any positive lead is reachable.
	//
	// The defaults (2, 4 and 0.7) are chosen for a dependency whose p99 is 5
	// times its median: 14% of its healthy probes take more than 0.7 x 3 = 2.1
	// times the median, so a slow probe alone proves nothing, and 0.07% of its
	// healthy phases re-open, after 2.8 probes on average; a dependency 3 times
	// slower than normal is slow at 2.1 times the median 70% of the time, and
	// re-opens about 81% of its phases, more than the 75% of the rule before
	// the leads (two good probes in a row, one slow probe re-opening). See
	// docs/breaker.md for the arithmetic, the measurements and the
	// alternatives.
	//
	// ProbeSuccesses is the lead of fast probes that closes. Zero means
	// 2. It is also the run of fast calls that
	// releases a ramp held by slow calls.
	ProbeSuccesses int
	// ProbeSlowLead is the lead of slow probes that re-opens. Zero means
	// 4. 1 with ProbeSuccesses 1 and ProbeSlowFraction
	// 1 judges the first probe alone.
	ProbeSlowLead int
	// ProbeSlowFraction is the fraction of the effective slow-call threshold
	// (SlowCallThreshold or the measured one) above which a successful probe
	// counts as slow. Zero means 0.7; otherwise it
	// must lie in (0, 1]: 1 judges probes as calls are judged, and a probe is
	// never judged more leniently than a call. It has no effect when no
	// threshold is set or measured: then no probe is slow.
	ProbeSlowFraction float64

	// Recovery, if set, makes a breaker whose probes succeeded ramp its traffic
	// back up (the Recovering state) instead of closing at once; see [Recovery].
	// Nil (the default) means no ramp: the breaker closes as soon as
	// ProbeSuccesses probes have succeeded. &Recovery{} is a ramp with every
	// default.
	Recovery *Recovery

	// Shadow, if true, starts the breaker in shadow mode, in which it refuses
	// nothing: it runs its whole state machine (trips, breaks, probes, the
	// recovery ramp, the measured normals, its events) on the attempts it
	// would have admitted, and admits the rest too, ignoring their outcomes,
	// so that it decides exactly what a real breaker would, without acting on
	// it. Its events carry Shadow set. Use it to try a new configuration
	// against production traffic before it refuses anything. Nothing refuses
	// in shadow mode, not even Isolate or IsolateFor. [Breaker.SetShadow]
	// changes the mode at run time. False (the default) is a real breaker.
	Shadow bool

	// Clock is the breaker's own clock: breaks, the trip window, probe slot
	// expiry and attempt durations are all measured on it. Nil means real time.
	Clock clockwork.Clock
	// Rand is the source of break jitter. It is only called with the breaker's
	// lock held, so it need not be safe for concurrent use, but it must not call
	// the breaker. Nil means a source seeded randomly for each breaker.
	Rand rand.Source
	// OnEvent receives the breaker's [Transition] and [Rejection] events with
	// the Source {Stage: "breaker", Name: Name}, so that one hook can serve
	// pipelines and breakers alike. A breaker belongs to no one pipeline or
	// call: Source.Pipeline is empty and the context is context.Background(). It is never called while the breaker's
	// lock is held, and receives events one at a time, in the order they
	// happened, each exactly once (see the package documentation). It may call
	// the breaker. One call of the breaker delivers at most two batches of at
	// most 256 events (the events waiting when it began delivering, and those
	// raised meanwhile), so a hook that raises an event for every event it
	// receives cannot hold a caller; what is left is delivered by the next call.
	// If it panics, the panic reaches the caller that was delivering, the events
	// after that one wait for the next call, and the breaker's state is intact:
	// an outcome is recorded before any event is delivered, and an admission
	// whose delivery panicked is withdrawn, freeing its probe slot. Nil means no
	// events are built.
	OnEvent func(context.Context, pipeline.Source, pipeline.Event)
}

// settings is a validated Config with its defaults filled in.
type settings struct {
	consecutive    int
	failureRatio   float64
	minimumCalls   int
	tripWindow     time.Duration
	buckets        int
	slowThreshold  time.Duration
	slowRatio      float64
	breakDuration  time.Duration
	maxBreak       time.Duration
	jitter         Jitter
	probes         int
	probeSuccesses int
	probeSlowLead  int
	probeFraction  float64 // ProbeSlowFraction, in (0, 1]

	ramp         bool // a recovery ramp is configured
	rampFraction float64
	rampInitial  float64
	rampMin      time.Duration
	rampMax      time.Duration
	trickleEvery time.Duration // 0: no trickle

	slowCalls   bool // the measured normal latency is kept
	slowMult    float64
	slowQ       float64
	slowWindow  time.Duration
	slowMinimum int

	relative    bool // the relative failure ratio is on (not disabled, not stepped aside)
	failMult    float64
	failFloor   float64
	failWindow  time.Duration // given, or derived from the trip window
	failMinimum int
}

// windowed reports whether a ratio trip is configured, so the trip window exists.
func (s *settings) windowed() bool {
	return s.failureRatio > 0 || s.relative || s.slowThreshold > 0 || s.slowCalls
}

// Validate reports every impossible value in c, each naming its field and value,
// joined into one error; it returns nil for a usable Config.
func (c Config) Validate() error {
	_, err := c.settings()
	return err
}

func (c Config) settings() (settings, error) {
	var p problems
	// Checked in field order, so the messages read in the order of the struct;
	// the races, which involve several fields, come last.
	var s settings
	s.consecutive = p.count("ConsecutiveFailures", c.ConsecutiveFailures, conf.DefaultConsecutiveFailures)
	s.failureRatio = c.FailureRatio
	p.ratio("FailureRatio", c.FailureRatio, "off")
	c.Failures.settings(&s, &p)
	s.minimumCalls = p.count("MinimumCalls", c.MinimumCalls, conf.DefaultMinimumCalls)
	s.tripWindow = p.duration("TripWindow", c.TripWindow, conf.DefaultTripWindow)
	s.buckets = p.count("WindowBuckets", c.WindowBuckets, conf.DefaultWindowBuckets)
	if s.buckets > conf.MaxWindowBuckets {
		p.add("WindowBuckets must be at most %d, got %d", conf.MaxWindowBuckets, s.buckets)
	} else if s.buckets > 0 && s.tripWindow > 0 && s.tripWindow < time.Duration(s.buckets) {
		p.add("TripWindow must be at least WindowBuckets nanoseconds, got TripWindow %v with WindowBuckets %d",
			s.tripWindow, s.buckets)
	}
	s.slowThreshold = c.SlowCallThreshold
	if c.SlowCallThreshold < 0 {
		p.add("SlowCallThreshold must not be negative (0 means off), got %v", c.SlowCallThreshold)
	}
	p.longest("SlowCallThreshold", c.SlowCallThreshold)
	s.slowRatio = c.SlowCallRatio
	p.ratio("SlowCallRatio", c.SlowCallRatio, fmt.Sprintf("the default %v", conf.DefaultSlowCallRatio))
	if s.slowRatio == 0 {
		s.slowRatio = conf.DefaultSlowCallRatio
	}
	c.SlowCalls.settings(&s, &p)
	s.breakDuration = p.duration("BreakDuration", c.BreakDuration, conf.DefaultBreakDuration)
	s.maxBreak = c.MaxBreakDuration
	switch {
	case s.maxBreak < 0:
		p.add("MaxBreakDuration must not be negative (0 means the default %v), got %v",
			conf.DefaultMaxBreakDuration, s.maxBreak)
	case s.maxBreak == 0:
		s.maxBreak = max(conf.DefaultMaxBreakDuration, s.breakDuration)
	case s.maxBreak > MaxDuration:
		p.longest("MaxBreakDuration", s.maxBreak)
	case s.maxBreak < s.breakDuration:
		p.add("MaxBreakDuration must not be shorter than BreakDuration, got MaxBreakDuration %v with BreakDuration %v",
			s.maxBreak, s.breakDuration)
	}
	s.jitter = c.BreakJitter
	if s.jitter > JitterNone {
		p.add("BreakJitter must be JitterEqual, JitterFull or JitterNone, got %v", s.jitter)
	}
	s.probes = p.count("HalfOpenProbes", c.HalfOpenProbes, conf.DefaultHalfOpenProbes)
	if s.probes > conf.MaxHalfOpenProbes {
		p.add("HalfOpenProbes must be at most %d (New allocates every probe slot, and each half-open admission "+
			"scans them), got %d", conf.MaxHalfOpenProbes, s.probes)
	}
	s.probeSuccesses = p.count("ProbeSuccesses", c.ProbeSuccesses, conf.DefaultProbeSuccesses)
	s.probeSlowLead = p.count("ProbeSlowLead", c.ProbeSlowLead, conf.DefaultProbeSlowLead)
	s.probeFraction = c.ProbeSlowFraction
	if math.IsNaN(c.ProbeSlowFraction) || c.ProbeSlowFraction < 0 || c.ProbeSlowFraction > 1 {
		p.add("ProbeSlowFraction must lie in (0, 1] (0 means the default %v; a probe is never judged more "+
			"leniently than a call), got %v", conf.DefaultProbeSlowFraction, c.ProbeSlowFraction)
	}
	if s.probeFraction == 0 {
		s.probeFraction = conf.DefaultProbeSlowFraction
	}
	c.Recovery.settings(&s, &p)
	if len(p) == 0 { // the races only mean something between valid fields
		s.latencyRace(c.SlowCalls, &p)
		s.failureRace(c.Failures, &p)
	}
	return s, errors.Join(p...)
}

// problems collects the impossible settings of a Config, one error each.
type problems []error

// add records one problem; format starts with the field's name after "Config.".
func (p *problems) add(format string, args ...any) {
	*p = append(*p, fmt.Errorf("breaker: Config."+format, args...))
}

// count checks a count whose zero value means def, and returns it with the
// default filled in.
func (p *problems) count(name string, v, def int) int {
	if v < 0 {
		p.add("%s must be at least 1 (0 means the default %d), got %d", name, def, v)
	}
	if v == 0 {
		return def
	}
	return v
}

// duration checks a duration whose zero value means def, and returns it with the
// default filled in.
func (p *problems) duration(name string, v, def time.Duration) time.Duration {
	if v < 0 {
		p.add("%s must not be negative (0 means the default %v), got %v", name, def, v)
	}
	p.longest(name, v)
	if v == 0 {
		return def
	}
	return v
}

// longest refuses a duration longer than MaxDuration.
func (p *problems) longest(name string, v time.Duration) {
	if v > MaxDuration {
		p.add("%s must be at most MaxDuration (%v, ten years), got %v", name, MaxDuration, v)
	}
}

// ratio checks a ratio in [0, 1], whose zero value means what zero says.
func (p *problems) ratio(name string, v float64, zero string) {
	if math.IsNaN(v) || v < 0 || v > 1 {
		p.add("%s must lie between 0 and 1 (0 means %s), got %v", name, zero, v)
	}
}

// multiple checks a multiple of a measured normal whose zero value means def, and
// returns it with the default filled in. A multiple of 1 or less would call the
// normal itself abnormal, and an infinite one would never call anything abnormal.
func (p *problems) multiple(name string, v, def float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || (v > 0 && v <= 1) {
		p.add("%s must be a finite number above 1 (0 means the default %v), got %v", name, def, v)
	}
	if v == 0 {
		return def
	}
	return v
}
