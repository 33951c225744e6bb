package simulate

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/resilience-go/pipeline/fleet/internal/quorum"
	"github.com/resilience-go/pipeline/internal/discrete"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/simulation"
)

// Streams of randomness derived from a run's seed.
const (
	streamModel uint64 = iota + 1
	streamPhase
	streamBreaker
	streamRestart
	streamRedis
)

// Run simulates c and returns its report, or an error naming every setting
// of c that cannot work. Runs share nothing: Run may be called from many
// goroutines at once.
func Run(c Config) (*Report, error) {
	s, err := c.settings()
	if err != nil {
		return nil, err
	}
	r, err := newRun(s)
	if err != nil {
		return nil, err
	}
	r.loop()
	if r.err != nil {
		return nil, r.err
	}
	return r.rep, nil
}

// run is one run in progress, on one goroutine.
type run struct {
	engine  // every breaker's clock, and the run's events
	s       settings
	up      simulation.Dependency // the dependency as it serves
	down    simulation.Dependency // a call that fails fast
	rand    *rand.Rand            // the models'
	procs   []proc
	pending []pending // attempts in flight, by slot
	free    []int32   // free slots of pending
	// hash is the fleet's Redis hash: the latest report of each process id,
	// when it was published (in nanoseconds of virtual time, shifted left by
	// 8) with its state in the low byte, or 0 before its first round. One
	// word per report keeps the count, which reads them all every round,
	// cheap under the race detector. Process i starts with id i; the j-th
	// restart gives its process the id Processes + j.
	hash      []uint64
	redis     simulation.Dependency // Config.Redis started, nil for an instant Redis
	redisRand *rand.Rand            // its draws
	rep       *Report
	err       error // that ended the run early
}

// proc is one client process.
type proc struct {
	b      *breaker.Breaker
	member quorum.Member // the fleet's side of its breaker
	period time.Duration // between two of its calls
	phase  time.Duration // of its first call
	calls  int           // of its schedule so far, offered or (before from) skipped
	id     int32         // its report's index in run.hash

	from      time.Duration // it makes no call before: a restarted process's Watch is reading
	restarted int32         // 1 + its index in Report.Restarts, 0 if it was not restarted
	degraded  bool          // its latest round trip failed
	pub       publication   // its round trip on its way to Redis
}

func newRun(s settings) (*run, error) {
	up, err := s.Dependency.Start()
	if err != nil {
		return nil, fmt.Errorf("simulate: Config.Dependency: %w", err)
	}
	down, err := simulation.Outage{Base: s.Dependency}.Start() // from 0, never ending
	if err != nil {
		return nil, fmt.Errorf("simulate: Config.Dependency: %w", err)
	}
	r := &run{
		engine: engine{discrete.New[event]()},
		s:      s,
		up:     up,
		down:   down,
		rand:   rand.New(rand.NewPCG(s.Seed, discrete.Derive(s.Seed, streamModel, 0))),
		procs:  make([]proc, s.Processes),
		hash:   make([]uint64, s.Processes+s.Restart.count(s.Processes)),
		rep: &Report{
			Name: s.Name, Variant: s.Variant, Strategy: s.Strategy, Situation: s.Situation, Seed: s.Seed, Processes: s.Processes,
			Rate: s.Rate, Rates: slices.Clone(s.Rates), Duration: s.Duration, Fault: s.Fault,
			Restart: s.Restart, Redis: s.Redis,
			Stops:   make([]time.Duration, s.Processes),
			Opened:  make([]time.Duration, s.Processes),
			Seconds: make([]Second, (s.Duration+time.Second-1)/time.Second),
		},
	}
	if s.Redis != nil && s.Strategy != Independent {
		if r.redis, err = s.Redis.Start(); err != nil {
			return nil, fmt.Errorf("simulate: Config.Redis: %w", err)
		}
		r.redisRand = rand.New(rand.NewPCG(s.Seed, discrete.Derive(s.Seed, streamRedis, 0)))
	}
	phases := rand.New(rand.NewPCG(s.Seed, discrete.Derive(s.Seed, streamPhase, 0)))
	for i := range r.procs {
		p := &r.procs[i]
		r.rep.Stops[i], r.rep.Opened[i] = -1, -1
		if p.b, err = r.newBreaker(i); err != nil {
			return nil, err
		}
		p.id = int32(i)
		p.period = s.period(i)
		p.phase = time.Duration(phases.Float64() * float64(p.period))
		r.push(event{at: p.phase, kind: evCall, proc: int32(i)})
	}
	if s.Strategy != Independent {
		for i := range r.procs {
			r.push(event{at: time.Duration(phases.Float64() * float64(s.Refresh)), kind: evRound, proc: int32(i), slot: int32(i)})
		}
	}
	r.planRestarts()
	return r, nil
}

// newBreaker builds the breaker of the process whose id is id, on the
// run's clock, with its own stream of jitter.
func (r *run) newBreaker(id int) (*breaker.Breaker, error) {
	bc := r.s.Breaker
	bc.Clock = r.Clock
	bc.Rand = rand.NewPCG(r.s.Seed, discrete.Derive(r.s.Seed, streamBreaker, uint64(id)))
	bc.OnEvent = nil // a hook would make every refusal build an event
	b, err := breaker.New(bc)
	if err != nil {
		return nil, fmt.Errorf("simulate: Config.Breaker: %w", err)
	}
	return b, nil
}

// loop handles events until none is left, advancing the clock to each.
func (r *run) loop() {
	for r.err == nil {
		e, ok := r.Next(nil)
		if !ok {
			return
		}
		switch e.kind {
		case evCall:
			r.call(e.proc)
		case evEnd:
			a := r.pending[e.slot]
			r.free = append(r.free, e.slot)
			a.b.Record(a.ticket, a.verdict, a.took)
			r.opened(e.proc)
		case evRound:
			r.round(e.proc, e.slot)
		case evReply:
			r.reply(e.proc, e.slot)
		case evRestart:
			r.restart(e.proc, e.slot)
		}
	}
}

// opened notes when process i's breaker first left Closed after the fault
// began; a breaker leaves it only when it records an attempt or the fleet
// forces it open.
func (r *run) opened(i int32) {
	if r.rep.Opened[i] < 0 && r.Now >= r.s.Fault.From && r.procs[i].b.State() != breaker.Closed {
		r.rep.Opened[i] = r.Now - r.s.Fault.From
	}
}

// failing reports whether a call of process i at virtual time at fails.
func (r *run) failing(i int32, at time.Duration) bool {
	return r.s.Fault.Contains(at) && r.rep.Reached(int(i))
}

// call offers process i's next call to its breaker, and, if admitted, to
// the dependency.
func (r *run) call(i int32) {
	p := &r.procs[i]
	p.calls++
	if next := p.phase + time.Duration(p.calls)*p.period; next < r.s.Duration {
		r.push(event{at: next, kind: evCall, proc: i})
	}
	if r.Now < p.from {
		return
	}
	sec := &r.rep.Seconds[r.Now/time.Second]
	sec.Offered++
	failing := r.failing(i, r.Now)
	t, err := p.b.Admit()
	if err != nil {
		if r.rep.Stops[i] < 0 && r.Now >= r.s.Fault.From {
			r.rep.Stops[i] = r.Now - r.s.Fault.From
		}
		sec.Refused++
		if !failing {
			sec.WronglyRefused++
		}
		if !r.rep.Reached(int(i)) {
			r.rep.SparedRefused++
		}
		r.restartRefused(p)
		return
	}
	sec.Attempts++
	dep := r.up
	if failing {
		sec.Doomed++
		dep = r.down
		r.restartDoomed(p)
	}
	a := dep.Respond(simulation.Attempt{At: r.Now, Rand: r.rand})
	var slot int32
	if n := len(r.free); n > 0 {
		slot, r.free = r.free[n-1], r.free[:n-1]
	} else {
		slot = int32(len(r.pending))
		r.pending = append(r.pending, pending{})
	}
	r.pending[slot] = pending{b: p.b, ticket: t, verdict: a.Verdict, took: a.Latency}
	r.push(event{at: r.Now + a.Latency, kind: evEnd, proc: i, slot: slot})
}

// round is one of process i's fleet rounds, under its id id: it sends
// Redis what the process says of its breaker, and Redis counts the reports
// seen within the TTL, as the fleet counts those it reads, and the process
// follows when they make a quorum (see trip). A restart, which gives the
// process a new id, ends the rounds of the old one.
func (r *run) round(i, id int32) {
	p := &r.procs[i]
	if p.id != id {
		return
	}
	if next := r.Now + r.s.Refresh; next < r.s.Duration {
		r.push(event{at: next, kind: evRound, proc: i, slot: id})
	}
	r.trip(i, publication{at: r.Now, state: p.member.Report(p.b.Snapshot())})
}

// need is how many open reports among seen make the strategy follow.
func (r *run) need(seen int) int {
	if r.s.Strategy == Naive {
		return 1 // any one process
	}
	return quorum.Need(seen, 0, r.s.Fraction)
}
