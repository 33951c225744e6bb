package dashboard

import (
	"math"
	"time"

	"github.com/resilience-go/pipeline/health"
)

// The bounds of what the dashboard keeps, whatever the registry holds.
const (
	// maxHistory is the most samples a dependency's sparklines hold.
	maxHistory = 3600
	// maxSeries is the most dependencies the dashboard keeps a history of;
	// beyond it, a dependency is shown with its current state only.
	maxSeries = 1000
	// maxTransitions is how many of its latest transitions a dependency keeps.
	maxTransitions = 8
)

// key tells dependencies apart: a registry may report several under one
// name (see health.Registry.Report), the n-th of them counted from 0.
type key struct {
	name string
	n    int
}

// sample is one reading of a dependency by the sampler. A value it could
// not read (no budget, no latency measured, no events observed) is NaN.
type sample struct {
	state              state
	pressure           float32 // the breaker's pressure, or its ramp's fraction while recovering
	tokens             float32
	p99                float32 // seconds
	attempts, refusals float32 // per second, since the previous sample
}

// series is the history of one dependency: a ring of its latest samples
// and its latest transitions, as far as the sampler saw them.
type series struct {
	ring []sample // oldest at next once it holds History samples
	next int
	// last is the breaker's state at the latest sample.
	last state
	// seen is the sampler's generation at which the dependency was last in
	// the report: a dependency gone from it (an evicted key) is dropped.
	seen uint64
	// counted is the counter the rates were last computed from, with its
	// counts and the time then.
	counted            *counter
	attempts, refusals uint64
	countedAt          time.Time
	// transitions are those the sampler saw, oldest first: a state that
	// differs from the previous sample's, for a dependency whose breaker's
	// events are not observed.
	transitions []transition
}

// push adds s to the ring, dropping the oldest sample once it holds size.
func (h *series) push(s sample, size int) {
	if len(h.ring) < size {
		h.ring = append(h.ring, s)
		return
	}
	h.ring[h.next] = s
	h.next = (h.next + 1) % size
}

// samples calls f with every sample, oldest first.
func (h *series) samples(f func(i int, s sample)) {
	n := len(h.ring)
	for i := range n {
		f(i, h.ring[(h.next+i)%n])
	}
}

// sample reads the registry once, without any lock held, and adds a sample
// of every dependency in it to its series, at now.
func (d *Dashboard) sample(now time.Time) {
	rep := d.cfg.Registry.Report()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.generation++
	names := make(map[string]bool, len(rep.Dependencies))
	counts := map[string]int{}
	for _, dep := range rep.Dependencies {
		k := key{dep.Name, counts[dep.Name]}
		counts[dep.Name]++
		names[dep.Name] = true
		h := d.series[k]
		if h == nil {
			if len(d.series) >= maxSeries {
				continue
			}
			h = &series{last: stateOf(dep)}
			d.series[k] = h
		}
		h.seen = d.generation
		d.record(h, dep, now)
	}
	for k, h := range d.series {
		if h.seen != d.generation {
			delete(d.series, k)
		}
	}
	d.counters.prune(names)
	d.sampledAt = now
}

// record adds the sample of dep at now to h. Call it with mu held.
func (d *Dashboard) record(h *series, dep health.Dependency, now time.Time) {
	nan := float32(math.NaN())
	s := sample{state: stateOf(dep), pressure: nan, tokens: nan, p99: nan, attempts: nan, refusals: nan}
	if b := dep.Breaker; b != nil {
		s.pressure = float32(b.Pressure)
		if s.state == recovering {
			s.pressure = float32(b.RampFraction)
		}
	}
	if dep.Budget != nil {
		s.tokens = float32(dep.Budget.Tokens)
	}
	if dep.Latency != nil {
		s.p99 = float32(dep.Latency.P99)
	}
	c := d.counters.lookup(dep.Name)
	if c != nil {
		if c != h.counted {
			// A counter new to h was made since the previous sample, which
			// forgot any counter of a name not in its report: everything
			// it counted happened since.
			h.counted, h.attempts, h.refusals, h.countedAt = c, 0, 0, d.sampledAt
		}
		attempts, refusals := c.attempts.Load(), c.refusals.Load()
		if !h.countedAt.IsZero() && now.After(h.countedAt) {
			seconds := now.Sub(h.countedAt).Seconds()
			s.attempts = float32(float64(attempts-h.attempts) / seconds)
			s.refusals = float32(float64(refusals-h.refusals) / seconds)
		}
		h.attempts, h.refusals, h.countedAt = attempts, refusals, now
	}
	if s.state != h.last && (c == nil || !c.transitioned.Load()) {
		h.transitions = appendTransition(h.transitions, transition{
			From: h.last.String(), To: s.state.String(), At: now, Sampled: true,
		})
	}
	h.last = s.state
	h.push(s, d.cfg.History)
}

// appendTransition appends t to ts, keeping the latest maxTransitions.
func appendTransition(ts []transition, t transition) []transition {
	if len(ts) == maxTransitions {
		copy(ts, ts[1:])
		ts = ts[:len(ts)-1]
	}
	return append(ts, t)
}

// run is the sampler: a sample at every tick until Close.
func (d *Dashboard) run() {
	defer close(d.done)
	t := d.cfg.Clock.NewTicker(d.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case now := <-t.Chan():
			d.sample(now)
		}
	}
}
