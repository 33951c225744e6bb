package dashboard

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// maxCounters is the most dependency names the hook counts events of; the
// sampler forgets those the registry no longer reports.
const maxCounters = 4096

// transition is one change of a breaker's state, as the page lists it.
type transition struct {
	From   string    `json:"from"`
	To     string    `json:"to"`
	Cause  string    `json:"cause,omitempty"`
	At     time.Time `json:"at"`
	Shadow bool      `json:"shadow,omitempty"`
	// Sampled is true for a transition the sampler saw between two
	// samples, rather than one the breaker reported: At is then the time
	// of the sample, and the cause is not known.
	Sampled bool `json:"sampled,omitempty"`
}

// counter is what the hook counted of one dependency.
type counter struct {
	attempts, refusals atomic.Uint64
	// transitioned is set once the breaker's transitions reach the hook:
	// the sampler then stops guessing them.
	transitioned atomic.Bool
	mu           sync.Mutex   // guards transitions
	transitions  []transition // oldest first, at most maxTransitions
}

// counters are the hook's counters, by dependency name. It is safe for
// concurrent use: the hook looks a name up without a lock.
type counters struct {
	m sync.Map // string to *counter
	n atomic.Int64
}

// lookup returns the counter of name, nil if the hook has seen none.
func (cs *counters) lookup(name string) *counter {
	c, _ := cs.m.Load(name)
	cc, _ := c.(*counter)
	return cc
}

// get returns the counter of name, made if need be; nil once maxCounters
// names are counted.
func (cs *counters) get(name string) *counter {
	if c := cs.lookup(name); c != nil {
		return c
	}
	if cs.n.Load() >= maxCounters {
		return nil
	}
	c, loaded := cs.m.LoadOrStore(name, new(counter))
	if !loaded {
		cs.n.Add(1)
	}
	return c.(*counter)
}

// prune forgets the counters of the names not in keep.
func (cs *counters) prune(keep map[string]bool) {
	cs.m.Range(func(k, _ any) bool {
		if !keep[k.(string)] {
			if _, deleted := cs.m.LoadAndDelete(k); deleted {
				cs.n.Add(-1)
			}
		}
		return true
	})
}

// Observe is an event hook, for pipeline.Options.OnEvent,
// breaker.Config.OnEvent or standard.ScopesConfig.Options.OnEvent (one
// function serves them all; combine it with others by pipeline.Hooks): it
// counts the attempts that finished (pipeline.AttemptFinished) and the
// breaker's refusals (breaker.Rejection) of each dependency, by the name
// its events carry, for the page's attempts and refusals per second, and
// keeps the breaker's latest transitions (breaker.Transition) with their
// causes. It ignores every other event, takes no lock but to keep a
// transition, and is safe for concurrent use.
func (d *Dashboard) Observe(_ context.Context, src pipeline.Source, e pipeline.Event) {
	name := src.Pipeline
	if name == "" { // the breaker's own events belong to no one pipeline
		name = src.Name
	}
	switch e := e.(type) {
	case pipeline.AttemptFinished:
		if c := d.counters.get(name); c != nil {
			c.attempts.Add(1)
		}
	case breaker.Rejection:
		if c := d.counters.get(name); c != nil && !e.Shadow {
			c.refusals.Add(1)
		}
	case breaker.Transition:
		if c := d.counters.get(name); c != nil {
			c.transitioned.Store(true)
			c.mu.Lock()
			c.transitions = appendTransition(c.transitions, transition{
				From: e.From.String(), To: e.To.String(), Cause: e.Cause.String(), At: e.At, Shadow: e.Shadow,
			})
			c.mu.Unlock()
		}
	}
}

// latest returns a copy of the counter's transitions, oldest first.
func (c *counter) latest() []transition {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]transition(nil), c.transitions...)
}
