package simulation

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/internal/discrete"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/adaptive"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/throttle"
)

// Streams of randomness derived from a run's seed.
const (
	streamModel uint64 = iota + 1
	streamPhase
	streamBreaker
	streamRetry
	streamArrival
	streamThrottle
	streamLevel
)

// Run simulates c and returns its report, or an error naming every setting of
// c that cannot work.
//
// The run is a discrete-event simulation on one goroutine: events (a process
// offering a call, an attempt starting, a copy of an attempt ending, a hedge
// falling due) are taken from a queue in order of time, and of scheduling among
// events at the same time; before each one, the one fake clock shared by every
// breaker, budget and estimator is advanced to its time. Every random draw comes
// from a PCG generator seeded from c.Seed, so the same c gives the same report,
// byte for byte.
//
// Each attempt asks the process's breaker (Admit), is answered by the model
// (once per copy when it is hedged), and is recorded with the breaker (Record,
// with the verdict and duration of the attempt); the call then goes on or stops
// by the retry stage's rules. Run is safe to call concurrently; one run shares
// nothing with another.
func Run(c Config) (*Report, error) {
	s, err := newSim(c)
	if err != nil {
		return nil, err
	}
	s.schedule()
	s.run()
	s.rec.until(max(s.Now, c.Duration))
	return s.rec.report(), nil
}

// newSim validates c and builds its run, with every process ready and no
// event scheduled yet.
func newSim(c Config) (*sim, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	dep, err := c.Dependency.Start()
	if err != nil {
		return nil, err
	}
	s := &sim{
		engine:      engine{discrete.New[event]()},
		cfg:         c,
		dep:         dep,
		rand:        rand.New(rand.NewPCG(c.Seed, discrete.Derive(c.Seed, streamModel, 0))),
		rec:         newRecorder(c, faultsOf(c.Dependency)),
		rampFigures: rampFigures(c.Client.Breaker),
	}
	if err := s.startProcesses(); err != nil {
		return nil, err
	}
	return s, nil
}

// sim is one run in progress.
type sim struct {
	engine
	cfg      Config
	dep      Dependency
	rand     *rand.Rand // the model's
	procs    []process
	calls    []call
	free     []int32 // indexes of finished calls, for reuse
	offered  int     // calls offered so far, over every process
	tags     uint64  // the last tag given to an attempt or a copy
	inFlight int
	rec      *recorder
	// rampFigures says the recovering breakers are read for the report's
	// ramp figures (see ramp.go).
	rampFigures bool
	// onAttempt, if set, is called when an attempt of call n (its index in
	// offer order) has ended, with its copies, the one whose result it kept,
	// and its duration. Tests use it.
	onAttempt func(n int, copies []attemptCopy, kept int, took time.Duration)
	// onJudged, if set, is called once the breaker has recorded an attempt
	// that the process's slow judge was shown, with what the judge made of it
	// (ok false: not a sample of the trip window). Tests use it.
	onJudged func(j judgement, ok bool)
}

// process is one client process: its breaker, its retry rules (with its
// budget), its hedging, and where it is in its arrivals.
type process struct {
	breaker   *breaker.Breaker   // nil: no breaker
	budget    *budget.Budget     // nil: unlimited
	hedge     *hedger            // nil: no hedging
	judge     *judge             // nil: no slow judge
	gate      *throttle.Throttle // nil: no throttle
	limit     *limiter           // nil: no limit
	lastLimit int                // the limit's latest reading (see recorder.limitNow)
	ramping   bool               // the breaker is Recovering, as its last transition said
	loop      loop
	phase     time.Duration
	pacer     pacer
}

// call is one logical call in progress.
type call struct {
	proc     int32
	n        int           // its index among the run's calls, in offer order
	offered  time.Duration // when it was offered
	deadline time.Time     // the zero time for none
	attempt  int           // the attempt in progress or last made, 1-based
	started  time.Duration // when that attempt started
	ticket   breaker.Ticket
	pass     throttle.Ticket
	level    criticality.Level // drawn by the process's limit, if it has one
	slot     adaptive.Ticket   // the adaptive limit's, for its Done
	verdict  outcome.Verdict   // of the last attempt, or of the refusal that ended it
	cut      bool              // the last attempt was cut at the client's timeout

	// The attempt in progress: its tag, its hedge delay (when armed), its
	// copies (copies[0] is the first), how many of them are running, the one
	// that won (-1 for none yet) and the one that ended last.
	tag     uint64
	delay   time.Duration
	copies  []attemptCopy
	running int
	winner  int
	last    int
	over    bool // the attempt has ended: no more hedges
}

// attemptCopy is one copy of an attempt: the only one without hedging.
type attemptCopy struct {
	tag      uint64          // tags its end event
	start    time.Duration   // when it was sent
	end      time.Duration   // when it ends, unless cancelled first
	verdict  outcome.Verdict // how it ends
	done     bool            // it ended, or was cancelled
	measured bool            // its latency was recorded with the estimator
	cut      bool            // the client's timeout cut it
}

// startProcesses builds every process: its breaker, budget, retry rules,
// hedging and slow judge, and its arrivals: its phase, and under Poisson
// arrivals the stream of its gaps.
func (s *sim) startProcesses() error {
	c := s.cfg
	phases := rand.New(rand.NewPCG(c.Seed, discrete.Derive(c.Seed, streamPhase, 0)))
	s.procs = make([]process, c.processes())
	for i := range s.procs {
		p := &s.procs[i]
		frac := phases.Float64()
		p.phase = evenPhase(frac, c.Rate)
		p.pacer = newPacer(c.Arrivals, frac, rand.NewPCG(c.Seed, discrete.Derive(c.Seed, streamArrival, uint64(i))))
		var err error
		if c.Client.Budget != nil && (c.Client.Retry != nil || c.Client.Hedge != nil) {
			bc := *c.Client.Budget
			bc.Clock = s.Clock
			if p.budget, err = budget.New(bc); err != nil {
				return fmt.Errorf("simulation: Client.Budget: %w", err)
			}
		}
		p.loop = newLoop(c.Client.Retry, p.budget, rand.NewPCG(c.Seed, discrete.Derive(c.Seed, streamRetry, uint64(i))))
		if p.judge, err = newJudge(c.Client.SlowJudge, c.Client.Breaker, s.Clock); err != nil {
			return fmt.Errorf("simulation: Client.SlowJudge: %w", err)
		}
		if c.Client.Breaker != nil {
			bc := *c.Client.Breaker
			bc.Clock = s.Clock
			bc.Rand = rand.NewPCG(c.Seed, discrete.Derive(c.Seed, streamBreaker, uint64(i)))
			bc.OnEvent = func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
				s.rec.onBreakerEvent(e)
				if tr, ok := e.(breaker.Transition); ok {
					p.ramping = tr.To == breaker.Recovering
					if p.judge != nil {
						p.judge.transition(tr)
					}
				}
			}
			if p.breaker, err = breaker.New(bc); err != nil {
				return fmt.Errorf("simulation: Client.Breaker: %w", err)
			}
		}
		if p.hedge, err = newHedger(c.Client.Hedge, s.Clock, p.breaker, p.budget); err != nil {
			return fmt.Errorf("simulation: Client.Hedge: %w", err)
		}
		if p.limit, err = newLimiter(c.Client.Limit, s.Clock, rand.NewPCG(c.Seed, discrete.Derive(c.Seed, streamLevel, uint64(i)))); err != nil {
			return err
		}
		if p.limit != nil {
			p.lastLimit = p.limit.limit()
			s.rec.limits += p.lastLimit
		}
		if c.Client.Throttle != nil {
			tc := *c.Client.Throttle
			tc.Clock = s.Clock
			tc.Rand = rand.NewPCG(c.Seed, discrete.Derive(c.Seed, streamThrottle, uint64(i)))
			if p.gate, err = throttle.New(tc); err != nil {
				return fmt.Errorf("simulation: Client.Throttle: %w", err)
			}
		}
	}
	s.rec.startLimits = s.rec.limits
	return nil
}

// schedule schedules every process's first arrival.
func (s *sim) schedule() {
	for i := range s.procs {
		s.scheduleArrival(int32(i))
	}
}

// scheduleArrival schedules process i's next call, if it falls within the
// run (see pacer.next).
func (s *sim) scheduleArrival(i int32) {
	p := &s.procs[i]
	if at, ok := p.pacer.next(&s.cfg, p.phase); ok {
		s.push(at, evArrive, i, 0)
	}
}

// run handles events until none is left. A stale event (the end of a copy that
// was cancelled, a hedge due after its attempt ended) is dropped before the
// clock moves to it, so it changes nothing, not even the run's length.
func (s *sim) run() {
	for {
		e, ok := s.Next(s.stale)
		if !ok {
			return
		}
		switch e.kind {
		case evArrive:
			s.arrive(e.id)
		case evStart:
			s.start(e.id)
		case evEnd:
			s.end(e.id, e.tag)
		case evHedge:
			s.hedge(e.id)
		}
	}
}

// stale reports whether e no longer applies: the end of a copy that has ended
// (it was cancelled), or a hedge due for an attempt that has ended. Tags are
// unique over the run, so an event of a call slot since reused is stale too.
func (s *sim) stale(e event) bool {
	switch e.kind {
	case evEnd:
		c := &s.calls[e.id]
		k := c.copyTagged(e.tag)
		return k < 0 || c.copies[k].done
	case evHedge:
		c := &s.calls[e.id]
		return c.tag != e.tag || c.over
	}
	return false
}

// arrive offers process i's next call and starts its first attempt.
func (s *sim) arrive(i int32) {
	s.scheduleArrival(i)
	s.rec.offer(s.Now)
	id := s.newCall()
	c := &s.calls[id]
	*c = call{proc: i, n: s.offered, offered: s.Now, copies: c.copies[:0]}
	s.offered++
	if p := &s.procs[i]; p.limit != nil {
		c.level = p.limit.level()
		s.rec.levelOffer(c.level)
		var ok bool
		if c.slot, ok = p.limit.acquire(c.level); !ok {
			s.rec.refused(c.offered, byLimit, c.level)
			s.free = append(s.free, id)
			return
		}
	}
	if d := s.cfg.Client.Deadline; d > 0 {
		c.deadline = s.Clock.Now().Add(d)
	}
	s.start(id)
}

// newCall returns the index of an unused call slot.
func (s *sim) newCall() int32 {
	if n := len(s.free); n > 0 {
		id := s.free[n-1]
		s.free = s.free[:n-1]
		return id
	}
	s.calls = append(s.calls, call{})
	return int32(len(s.calls) - 1)
}

// finish records how call id ended, gives its slot of the process's limit
// back, and frees the call's slot.
func (s *sim) finish(id int32, st step) {
	c := &s.calls[id]
	switch {
	case st.served:
		s.rec.served(c.offered, s.Now-c.offered, c.level)
	case st.reason == pipeline.DependencyUnavailable:
		s.rec.refused(c.offered, byBreaker, c.level)
	case st.reason == pipeline.BudgetExhausted:
		s.rec.refused(c.offered, byBudget, c.level)
	default:
		s.rec.failed(c.offered, c.cut, c.level)
	}
	if p := &s.procs[c.proc]; p.limit != nil {
		p.limit.release(c.level, c.slot, c.verdict)
		s.rec.limitNow(s.Now, p)
	}
	s.free = append(s.free, id)
}
