package simulation

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/internal/discrete"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/adaptive"
	"github.com/resilience-go/pipeline/policy/bulkhead"
)

// LimitConfig is one simulated run of a concurrency limit: one client process
// offering Rate calls a second to a dependency, each call one attempt (no
// retry, breaker or hedge), through a fixed bulkhead, an adaptive limit, or
// neither. [RunLimit] validates it and runs it.
//
// What is real: the bulkhead (a *bulkhead.Bulkhead, TryAcquire and Release)
// and the adaptive limit (an *adaptive.Limiter, TryAcquire and Done, with its
// estimator), on the run's virtual clock. Neither has a queue here: a call
// that finds the limit reached is refused at once, so the comparison is of
// the limits alone.
type LimitConfig struct {
	// Name labels the run in its report. Empty means no label.
	Name string
	// Seed seeds every random draw: the model's and the arrival phase.
	Seed uint64
	// Duration is how long calls are offered, from time 0; calls still
	// running at the end run to completion. It must be positive.
	Duration time.Duration
	// Rate is how many calls a second the process offers, evenly spaced: a
	// finite number above 0.
	Rate float64
	// Dependency is the modelled dependency. It is required.
	Dependency Model
	// Timeout is how long the client waits for an attempt; a later answer is
	// cut there and counts as timed out (the dependency, not told, goes on
	// working on it). Zero means no limit; it must not be negative.
	Timeout time.Duration
	// Bulkhead, if set, limits the calls in flight to a fixed number. Its
	// MaxQueue must be 0; the run supplies its Clock.
	Bulkhead *bulkhead.Config
	// Critical, if above 0, marks that fraction of the calls Critical and
	// the rest Sheddable (criticality.With), each call drawn at random, so
	// that the limit's shares (Config.Shares of the bulkhead or adaptive
	// limit) decide who is refused; the report counts each level apart
	// (LimitReport.Levels). Zero leaves every call unmarked. It must be in
	// [0, 1].
	Critical float64
	// Unmarked, with Critical, draws and counts each call's level but marks
	// no context with it: the same run without criticality, for
	// comparison.
	Unmarked bool
	// Adaptive, if set, limits them to what an adaptive limiter finds. Its
	// MaxQueue must be 0; the run supplies its Clock, and Estimator must be
	// nil (the limiter builds its own on the run's clock). At most one of
	// Bulkhead and Adaptive may be set; neither means no limit.
	Adaptive *adaptive.Config
}

// Validate reports every setting of c that cannot work, joined.
func (c LimitConfig) Validate() error {
	var errs []error
	if c.Duration <= 0 {
		errs = append(errs, fmt.Errorf("simulation: LimitConfig.Duration must be positive, got %v", c.Duration))
	}
	if !(c.Rate > 0) || math.IsInf(c.Rate, 1) {
		errs = append(errs, fmt.Errorf("simulation: LimitConfig.Rate must be a finite number above 0, got %v", c.Rate))
	}
	if c.Dependency == nil {
		errs = append(errs, errors.New("simulation: LimitConfig.Dependency is required"))
	}
	if c.Timeout < 0 {
		errs = append(errs, fmt.Errorf("simulation: LimitConfig.Timeout must not be negative, got %v", c.Timeout))
	}
	if !(c.Critical >= 0 && c.Critical <= 1) {
		errs = append(errs, fmt.Errorf("simulation: LimitConfig.Critical must be a fraction in [0, 1], got %v", c.Critical))
	}
	if c.Bulkhead != nil && c.Adaptive != nil {
		errs = append(errs, errors.New("simulation: LimitConfig.Bulkhead and LimitConfig.Adaptive are both set: choose one"))
	}
	if c.Bulkhead != nil && c.Bulkhead.MaxQueue != 0 {
		errs = append(errs, fmt.Errorf("simulation: LimitConfig.Bulkhead.MaxQueue must be 0 (the run has no queue), got %d", c.Bulkhead.MaxQueue))
	}
	if c.Adaptive != nil && c.Adaptive.MaxQueue != 0 {
		errs = append(errs, fmt.Errorf("simulation: LimitConfig.Adaptive.MaxQueue must be 0 (the run has no queue), got %d", c.Adaptive.MaxQueue))
	}
	if c.Adaptive != nil && c.Adaptive.Estimator != nil {
		errs = append(errs, errors.New("simulation: LimitConfig.Adaptive.Estimator must be nil: the limiter builds its own on the run's clock"))
	}
	return errors.Join(errs...)
}

// limitCall is one call in flight in a limit run.
type limitCall struct {
	offered time.Duration
	level   criticality.Level
	ticket  adaptive.Ticket
	verdict outcome.Verdict
	cut     bool // the client stopped waiting at Timeout
}

// limitSim is one limit run in progress.
type limitSim struct {
	engine
	cfg   LimitConfig
	dep   Dependency
	rand  *rand.Rand
	level *rand.Rand // draws each call's level
	ctx   [criticality.Levels + 1]context.Context
	bh    *bulkhead.Bulkhead
	al    *adaptive.Limiter
	calls []limitCall
	held  freeAt // when each attempt the dependency holds ends, earliest first
	rep   *LimitReport
}

// RunLimit simulates c and returns its report, or an error naming every
// setting of c that cannot work. Like [Run], it is a discrete-event
// simulation on one goroutine and virtual time, and the same c gives the same
// report, byte for byte.
func RunLimit(c LimitConfig) (*LimitReport, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	dep, err := c.Dependency.Start()
	if err != nil {
		return nil, err
	}
	s := &limitSim{
		engine: engine{discrete.New[event]()},
		cfg:    c,
		dep:    dep,
		rand:   rand.New(rand.NewPCG(c.Seed, discrete.Derive(c.Seed, streamModel, 0))),
		level:  rand.New(rand.NewPCG(c.Seed, discrete.Derive(c.Seed, streamLevel, 0))),
		rep:    &LimitReport{Name: c.Name, Seed: c.Seed, Rate: c.Rate, Duration: c.Duration, Faults: faultsOf(c.Dependency)},
	}
	switch {
	case c.Bulkhead != nil:
		cfg := *c.Bulkhead
		cfg.Clock = s.Clock
		if s.bh, err = bulkhead.New(cfg); err != nil {
			return nil, err
		}
		s.rep.Limiter = fmt.Sprintf("bulkhead of %d", cfg.MaxConcurrent)
	case c.Adaptive != nil:
		cfg := *c.Adaptive
		cfg.Clock = s.Clock
		if s.al, err = adaptive.New(cfg); err != nil {
			return nil, err
		}
		s.rep.Limiter = "adaptive limit"
	default:
		s.rep.Limiter = "no limit"
	}
	for l := range s.ctx {
		s.ctx[l] = criticality.With(context.Background(), criticality.Level(l))
	}
	phase := rand.New(rand.NewPCG(c.Seed, discrete.Derive(c.Seed, streamPhase, 0)))
	period := time.Duration(float64(time.Second) / c.Rate)
	s.push(time.Duration(phase.Int64N(int64(period))), evArrive, 0, 0)
	for {
		e, ok := s.Next(nil)
		if !ok {
			break
		}
		s.settle()
		switch e.kind {
		case evArrive:
			s.arrive()
			if next := e.at + period; next < c.Duration {
				s.push(next, evArrive, 0, 0)
			}
		case evEnd:
			s.end(int(e.id))
		}
	}
	s.rep.finish()
	return s.rep, nil
}

// settle lets the dependency finish what ends by now.
func (s *limitSim) settle() {
	for len(s.held) > 0 && s.held[0] <= s.Now {
		heap.Pop(&s.held)
	}
}

// arrive offers a call: the limit takes it or refuses it, and the dependency
// answers it.
func (s *limitSim) arrive() {
	sec := s.rep.second(s.Now)
	sec.Offered++
	c := limitCall{offered: s.Now}
	if s.cfg.Critical > 0 {
		c.level = criticality.Sheddable
		if s.level.Float64() < s.cfg.Critical {
			c.level = criticality.Critical
		}
	}
	lv := s.rep.levelOf(c.level)
	lv.Offered++
	ctx := s.ctxOf(c.level)
	switch {
	case s.bh != nil:
		if _, ok := s.bh.TryAcquire(ctx); !ok {
			sec.Refused++
			lv.Refused++
			return
		}
	case s.al != nil:
		t, ok := s.al.TryAcquire(ctx)
		if !ok {
			sec.Refused++
			lv.Refused++
			return
		}
		c.ticket = t
	}
	r := s.dep.Respond(Attempt{At: s.Now, Limit: s.cfg.Timeout, InFlight: len(s.held), Rand: s.rand})
	heap.Push(&s.held, s.Now+r.Latency)
	sec.Held = max(sec.Held, len(s.held))
	took := r.Latency
	c.verdict = r.Verdict
	if t := s.cfg.Timeout; t > 0 && took > t {
		took, c.cut = t, true
		c.verdict = outcome.Verdict{Kind: outcome.Transient}
	}
	s.calls = append(s.calls, c)
	s.push(s.Now+took, evEnd, int32(len(s.calls)-1), 0)
}

// ctxOf is the context of the calls of level l: marked with it, unless the
// run is unmarked. A call takes and gives back its slot with it.
func (s *limitSim) ctxOf(l criticality.Level) context.Context {
	if s.cfg.Unmarked {
		return s.ctx[0]
	}
	return s.ctx[l]
}

// end ends call i's attempt: it gives its slot back and is counted.
func (s *limitSim) end(i int) {
	c := &s.calls[i]
	switch {
	case s.bh != nil:
		s.bh.Release(s.ctxOf(c.level))
	case s.al != nil:
		s.al.Done(c.ticket, c.verdict)
	}
	sec := s.rep.second(c.offered)
	lv := s.rep.levelOf(c.level)
	switch {
	case c.cut:
		sec.TimedOut++
		lv.TimedOut++
	case c.verdict.Kind == outcome.OK:
		sec.Served++
		sec.LevelServed[c.level]++
		lv.Served++
		s.rep.latencies = append(s.rep.latencies, s.Now-c.offered)
		lv.latencies = append(lv.latencies, s.Now-c.offered)
		s.rep.perSecond(c.offered, s.Now-c.offered)
	default:
		sec.Failed++
		lv.Failed++
	}
	if s.al != nil {
		s.rep.second(s.Now).Limit = s.al.Limit()
	}
}
