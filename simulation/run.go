package simulation

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// epoch is the wall-clock instant a run's virtual time 0 stands for, on the
// fake clock that every breaker and budget of the run shares.
var epoch = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)

// Streams of randomness derived from a run's seed.
const (
	streamModel uint64 = iota + 1
	streamPhase
	streamBreaker
	streamRetry
)

// Run simulates c and returns its report, or an error naming every setting of
// c that cannot work.
//
// The run is a discrete-event simulation on one goroutine: events (a process
// offering a call, an attempt starting, an attempt ending) are taken from a
// queue in order of time, and of scheduling among events at the same time;
// before each one, the one fake clock shared by every breaker and budget is
// advanced to its time. Every random draw comes from a PCG generator seeded from
// c.Seed, so the same c gives the same report, byte for byte.
//
// Each attempt asks the process's breaker (Admit), is answered by the model,
// and is recorded with the breaker (Record, with its verdict and duration); the
// call then goes on or stops by the retry stage's rules. Run is safe to call
// concurrently; one run shares nothing with another.
func Run(c Config) (*Report, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	dep, err := c.Dependency.Start()
	if err != nil {
		return nil, err
	}
	s := &sim{
		cfg:    c,
		clock:  clockwork.NewFakeClockAt(epoch),
		dep:    dep,
		rand:   rand.New(rand.NewPCG(c.Seed, derive(c.Seed, streamModel, 0))),
		period: time.Duration(float64(time.Second) / c.Rate),
		rec:    newRecorder(c, faultsOf(c.Dependency)),
	}
	if err := s.startProcesses(); err != nil {
		return nil, err
	}
	s.run()
	s.rec.until(max(s.now, c.Duration))
	return s.rec.report(), nil
}

// derive returns the second PCG seed word of stream for the index-th process,
// mixed (SplitMix64's finalizer) so that nearby streams are unrelated.
func derive(seed, stream, index uint64) uint64 {
	z := seed ^ stream<<56 ^ index<<8 ^ 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// sim is one run in progress.
type sim struct {
	cfg      Config
	clock    *clockwork.FakeClock
	now      time.Duration
	q        queue
	dep      Dependency
	rand     *rand.Rand // the model's
	period   time.Duration
	procs    []process
	calls    []call
	free     []int32 // indexes of finished calls, for reuse
	inFlight int
	rec      *recorder
}

// process is one client process: its breaker, its retry rules (with its
// budget), and where it is in its arrivals.
type process struct {
	breaker *breaker.Breaker // nil: no breaker
	loop    loop
	phase   time.Duration
	offered int // calls offered so far
}

// call is one logical call in progress.
type call struct {
	proc     int32
	offered  time.Duration // when it was offered
	deadline time.Time     // the zero time for none
	attempt  int           // the attempt in progress or last made, 1-based
	started  time.Duration // when that attempt started
	latency  time.Duration // how long it takes
	verdict  outcome.Verdict
	ticket   breaker.Ticket
}

// startProcesses builds every process and schedules its first arrival.
func (s *sim) startProcesses() error {
	c := s.cfg
	phases := rand.New(rand.NewPCG(c.Seed, derive(c.Seed, streamPhase, 0)))
	s.procs = make([]process, c.processes())
	for i := range s.procs {
		p := &s.procs[i]
		p.phase = time.Duration(phases.Float64() * float64(s.period))
		var b *budget.Budget
		if c.Client.Budget != nil && c.Client.Retry != nil {
			bc := *c.Client.Budget
			bc.Clock = s.clock
			var err error
			if b, err = budget.New(bc); err != nil {
				return fmt.Errorf("simulation: Client.Budget: %w", err)
			}
		}
		p.loop = newLoop(c.Client.Retry, b, rand.NewPCG(c.Seed, derive(c.Seed, streamRetry, uint64(i))))
		if c.Client.Breaker != nil {
			bc := *c.Client.Breaker
			bc.Clock = s.clock
			bc.Rand = rand.NewPCG(c.Seed, derive(c.Seed, streamBreaker, uint64(i)))
			bc.OnEvent = s.rec.onBreakerEvent
			var err error
			if p.breaker, err = breaker.New(bc); err != nil {
				return fmt.Errorf("simulation: Client.Breaker: %w", err)
			}
		}
		s.scheduleArrival(int32(i))
	}
	return nil
}

// scheduleArrival schedules process i's next call, if it falls within the run.
func (s *sim) scheduleArrival(i int32) {
	p := &s.procs[i]
	at := p.phase + time.Duration(float64(p.offered)*float64(time.Second)/s.cfg.Rate)
	if at < s.cfg.Duration {
		s.q.push(at, evArrive, i)
	}
}

// run handles events until none is left.
func (s *sim) run() {
	for {
		e, ok := s.q.pop()
		if !ok {
			return
		}
		if e.at > s.now {
			s.clock.Advance(e.at - s.now)
			s.now = e.at
		}
		switch e.kind {
		case evArrive:
			s.arrive(e.id)
		case evStart:
			s.start(e.id)
		case evEnd:
			s.end(e.id)
		}
	}
}

// arrive offers process i's next call and starts its first attempt.
func (s *sim) arrive(i int32) {
	p := &s.procs[i]
	p.offered++
	s.scheduleArrival(i)
	s.rec.offer(s.now)
	id := s.newCall()
	c := &s.calls[id]
	*c = call{proc: i, offered: s.now}
	if d := s.cfg.Client.Deadline; d > 0 {
		c.deadline = s.clock.Now().Add(d)
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

// start starts call id's next attempt: the breaker admits or refuses it, and an
// admitted attempt is sent to the dependency and scheduled to end.
func (s *sim) start(id int32) {
	c := &s.calls[id]
	p := &s.procs[c.proc]
	c.attempt++
	c.ticket = breaker.Ticket{}
	if p.breaker != nil {
		t, err := p.breaker.Admit()
		if err != nil {
			v := outcome.Verdict{Kind: outcome.Throttled, SelfImposed: true}
			s.finish(id, p.loop.after(c.attempt, v, s.clock.Now(), c.deadline))
			return
		}
		c.ticket = t
	}
	s.rec.attempt(s.now, c.ticket.Probe())
	limit := s.cfg.Client.AttemptTimeout
	if !c.deadline.IsZero() {
		left := c.deadline.Sub(s.clock.Now())
		if limit == 0 || left < limit {
			limit = left
		}
	}
	r := s.dep.Respond(Attempt{At: s.now, Limit: limit, InFlight: s.inFlight, Rand: s.rand})
	c.started, c.latency, c.verdict = s.now, max(r.Latency, 0), r.Verdict
	if limit > 0 && c.latency >= limit {
		c.latency, c.verdict = limit, outcome.Verdict{Kind: outcome.Transient} // our timeout
	}
	s.inFlight++
	s.q.push(s.now+c.latency, evEnd, id)
}

// end ends call id's attempt in progress: the breaker records it, and the retry
// rules decide whether the call is over.
func (s *sim) end(id int32) {
	c := &s.calls[id]
	s.inFlight--
	if b := s.procs[c.proc].breaker; b != nil {
		b.Record(c.ticket, c.verdict, c.latency)
	}
	st := s.procs[c.proc].loop.after(c.attempt, c.verdict, s.clock.Now(), c.deadline)
	if !st.served && st.reason == 0 {
		s.q.push(s.now+st.wait, evStart, id)
		return
	}
	s.finish(id, st)
}

// finish records how call id ended and frees its slot.
func (s *sim) finish(id int32, st step) {
	c := &s.calls[id]
	switch {
	case st.served:
		s.rec.served(c.offered, s.now-c.offered)
	case st.reason == pipeline.DependencyUnavailable:
		s.rec.refused(c.offered, byBreaker)
	case st.reason == pipeline.BudgetExhausted:
		s.rec.refused(c.offered, byBudget)
	default:
		s.rec.failed(c.offered)
	}
	s.free = append(s.free, id)
}
