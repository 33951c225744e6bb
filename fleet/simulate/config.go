package simulate

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/resilience-go/pipeline/fleet/internal/quorum"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/simulation"
)

// Strategy is how the processes of a run share their breakers.
type Strategy uint8

const (
	// Independent: each process decides on its own evidence alone.
	Independent Strategy = iota
	// Naive is shared state, as a breaker whose state lives in Redis: when
	// any one process reports its breaker open on its own evidence, every
	// other closed breaker follows, with the fleet's publication and refresh
	// delays. It is the fleet's rounds with a quorum of one.
	Naive
	// Quorum is the fleet's rule: a closed breaker follows when more than
	// Config.Fraction of the processes seen within Config.TTL, and at least
	// two, report open on their own evidence.
	Quorum
)

// Strategies lists the strategies in the order the scenario runs them.
var Strategies = []Strategy{Independent, Naive, Quorum}

// String returns the strategy's name, such as "quorum".
func (s Strategy) String() string {
	switch s {
	case Independent:
		return "independent"
	case Naive:
		return "naive"
	case Quorum:
		return "quorum"
	}
	return fmt.Sprintf("simulate.Strategy(%d)", uint8(s))
}

// Situation is what goes wrong during Config.Fault.
type Situation uint8

const (
	// Outage: the dependency fails every call, from every process.
	Outage Situation = iota
	// SickProcess: one process's own network fails every call it makes,
	// while the dependency serves every other process.
	SickProcess
	// ZoneOutage: the dependency fails every call from a third of the
	// processes (those whose index is a multiple of 3, as one zone of three),
	// and serves the others.
	ZoneOutage
)

// Situations lists the situations in the order the scenario runs them
// (ZoneOutage is one of the fleet's failures, not of the scenario).
var Situations = []Situation{Outage, SickProcess}

// String returns the situation's name, such as "sick-process".
func (s Situation) String() string {
	switch s {
	case Outage:
		return "outage"
	case SickProcess:
		return "sick-process"
	case ZoneOutage:
		return "zone-outage"
	}
	return fmt.Sprintf("simulate.Situation(%d)", uint8(s))
}

// The defaults of Config, each the meaning of its zero value.
const (
	// defaultProcesses is the size of the fleet.
	defaultProcesses = 200
	// defaultRate is the calls a second each process makes.
	defaultRate = 2.0
	// defaultDuration is the length of a run: long enough for the breakers
	// that broke twice during the fault to recover after it (the last
	// wrongly refused call of seed 1 is offered at 81 s).
	defaultDuration = 90 * time.Second
	// defaultFaultFrom and defaultFaultTo bound the fault: 30 s healthy
	// (the breakers measure their normals), then 20 s of fault.
	defaultFaultFrom = 30 * time.Second
	defaultFaultTo   = 50 * time.Second
)

// Config is one run: a fleet, a strategy and a situation.
type Config struct {
	// Name names the run in its report; empty means the situation's name.
	Name string
	// Variant tells the run from the others of its case that share its
	// strategy, such as "Redis instant"; a chart names its line by the
	// strategy and the variant (see Report.Label). Empty means none.
	Variant string
	// Seed seeds every random draw of the run.
	Seed uint64
	// Strategy is how the processes share their breakers.
	Strategy Strategy
	// Situation is what fails during Fault.
	Situation Situation
	// Processes is the size of the fleet; 0 means 200. In the
	// sick-process situation, process 0 is the sick one.
	Processes int
	// Rate is the calls a second each process makes, at a constant rate
	// from its own random phase; 0 means 2.
	Rate float64
	// Rates, when not nil, gives each process its own constant rate instead
	// of Rate, for an uneven load: process i makes Rates[i % len(Rates)]
	// calls a second.
	Rates []float64
	// Duration is how long the run lasts; 0 means 90 s.
	Duration time.Duration
	// Fault is when the situation's failure lasts; the zero value means
	// 30 s to 50 s. Its To must not be 0.
	Fault simulation.Interval
	// Dependency is the dependency while it serves; nil means
	// simulation.Healthy{} (20 ms median, 100 ms p99). During the fault a
	// failing call fails fast, as a refused connection (simulation.Outage).
	Dependency simulation.Model
	// Breaker configures every process's breaker; the run sets its Clock
	// and Rand, ignores its OnEvent, and names it "dependency" when Name is
	// empty.
	Breaker breaker.Config
	// Refresh, TTL and Fraction are the fleet's settings, with the meaning
	// and the defaults of fleet.Config's (Quorum uses all three, Naive the
	// first two).
	Refresh, TTL time.Duration
	Fraction     float64
	// Restart, when its Share is positive, restarts that share of the
	// processes during the run (see Restart). The zero value restarts none.
	Restart Restart
	// Redis, when not nil, is the Redis the fleet's rounds reach: each round
	// trip (a round, or the read of a restarted process's Watch) is one
	// attempt on the model, taking its latency. A trip that fails, or that
	// takes longer than the round's timeout, half of Refresh, fails the round
	// (see redis.go). Nil means a Redis that answers every trip at once.
	// Independent processes never reach it.
	Redis simulation.Model
}

// settings is a validated Config with its defaults applied.
type settings struct {
	Config
}

// period is the time between two calls of process i.
func (s *settings) period(i int) time.Duration {
	r := s.Rate
	if len(s.Rates) > 0 {
		r = s.Rates[i%len(s.Rates)]
	}
	return time.Duration(float64(time.Second) / r)
}

// Validate reports every impossible value in c, each naming its field.
func (c Config) Validate() error {
	_, err := c.settings()
	return err
}

func (c Config) settings() (settings, error) {
	var p []error
	add := func(format string, args ...any) { p = append(p, fmt.Errorf("simulate: Config."+format, args...)) }
	if c.Strategy > Quorum {
		add("Strategy is unknown: %v", c.Strategy)
	}
	if c.Situation > ZoneOutage {
		add("Situation is unknown: %v", c.Situation)
	}
	if c.Name == "" {
		c.Name = c.Situation.String()
	}
	if c.Processes == 0 {
		c.Processes = defaultProcesses
	}
	if c.Processes < 2 {
		add("Processes must be at least 2, got %d", c.Processes)
	}
	if c.Rate == 0 {
		c.Rate = defaultRate
	}
	if !(c.Rate > 0 && c.Rate <= 1000) {
		add("Rate must lie in (0, 1000] calls a second, got %v", c.Rate)
	}
	for i, r := range c.Rates {
		if !(r > 0 && r <= 1000) {
			add("Rates[%d] must lie in (0, 1000] calls a second, got %v", i, r)
		}
	}
	if c.Duration == 0 {
		c.Duration = defaultDuration
	}
	if c.Duration < 0 {
		add("Duration must not be negative, got %v", c.Duration)
	}
	if c.Fault == (simulation.Interval{}) {
		c.Fault = simulation.Interval{From: defaultFaultFrom, To: defaultFaultTo}
	}
	if c.Fault.From < 0 || c.Fault.To <= c.Fault.From {
		add("Fault must start at 0 or later and end after it starts, got [%v, %v)", c.Fault.From, c.Fault.To)
	}
	if c.Dependency == nil {
		c.Dependency = simulation.Healthy{}
	}
	if c.Breaker.Name == "" {
		c.Breaker.Name = "dependency"
	}
	if c.Refresh == 0 {
		c.Refresh = quorum.DefaultRefresh
	}
	if c.TTL == 0 {
		c.TTL = quorum.DefaultStaleRefreshes * c.Refresh
	}
	if c.Refresh < time.Millisecond || c.TTL < c.Refresh {
		add("Refresh must be at least 1ms and TTL at least Refresh, got Refresh %v, TTL %v", c.Refresh, c.TTL)
	}
	if c.Fraction == 0 {
		c.Fraction = quorum.DefaultFraction
	}
	if math.IsNaN(c.Fraction) || c.Fraction < 0 || c.Fraction >= 1 {
		add("Fraction must lie in [0, 1), got %v", c.Fraction)
	}
	if err := c.Restart.validate(c.Duration); err != nil {
		p = append(p, err)
	}
	return settings{Config: c}, errors.Join(p...)
}
