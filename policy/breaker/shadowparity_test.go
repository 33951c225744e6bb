package breaker_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/breaker/breakertest"
)

// twin is one breaker of a parity run, on its own fake clock, with its events.
type twin struct {
	clock       *clockwork.FakeClock
	b           *breaker.Breaker
	transitions []breaker.Transition
	rejections  []breaker.Rejection
}

// newTwin builds a breaker from cfg with its own fake clock and a random source
// seeded with seed, in shadow mode or not, and with a hook or without one.
func newTwin(t *rapid.T, cfg breaker.Config, seed uint64, shadow, hook bool) *twin {
	w := &twin{clock: clockwork.NewFakeClockAt(epoch)}
	cfg.Clock, cfg.Rand, cfg.Shadow = w.clock, rand.NewPCG(seed, 0), shadow
	if hook {
		cfg.OnEvent = func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			switch e := e.(type) {
			case breaker.Transition:
				w.transitions = append(w.transitions, e)
			case breaker.Rejection:
				w.rejections = append(w.rejections, e)
			}
		}
	}
	b, err := breaker.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	w.b = b
	return w
}

// parity feeds the same attempts to a real breaker and to two shadow breakers of
// the same configuration, one observed and one without a hook (which a real
// breaker would refuse without taking its lock).
type parity struct {
	real, shadow, quiet *twin
	inflight            []attempt
}

// attempt is one attempt of a parity run: the real breaker's ticket, if it
// admitted the attempt, and the shadow breakers' tickets.
type attempt struct {
	real          breaker.Ticket
	admitted      bool
	shadow, quiet breaker.Ticket
}

func (p *parity) twins() []*twin { return []*twin{p.real, p.shadow, p.quiet} }

func (p *parity) advance(d time.Duration) {
	for _, w := range p.twins() {
		w.clock.Advance(d)
	}
}

// admit offers one attempt to the three breakers. The shadow ones must admit
// it, with a shadow ticket exactly when the real one refuses.
func (p *parity) admit(t *rapid.T) {
	rt, rerr := p.real.b.Admit()
	st, serr := p.shadow.b.Admit()
	qt, qerr := p.quiet.b.Admit()
	if serr != nil || qerr != nil {
		t.Fatalf("a shadow breaker refused: %v, %v", serr, qerr)
	}
	refused := rerr != nil
	if st.Shadow() != refused || qt.Shadow() != refused {
		t.Fatalf("real breaker refused: %v (%v); shadow tickets: %v, %v", refused, rerr, st.Shadow(), qt.Shadow())
	}
	if st.Probe() != rt.Probe() || qt.Probe() != rt.Probe() {
		t.Fatalf("probe: real %v, shadow %v, %v", rt.Probe(), st.Probe(), qt.Probe())
	}
	p.inflight = append(p.inflight, attempt{real: rt, admitted: !refused, shadow: st, quiet: qt})
}

// take removes and returns a random attempt in flight, or skips the action.
func (p *parity) take(t *rapid.T) attempt {
	if len(p.inflight) == 0 {
		t.Skip("nothing in flight")
	}
	i := rapid.IntRange(0, len(p.inflight)-1).Draw(t, "attempt")
	a := p.inflight[i]
	p.inflight = slices.Delete(p.inflight, i, i+1)
	return a
}

// record records v, of duration d, for a on every breaker that admitted it: a
// shadow breaker's shadow ticket too, whose outcome it must ignore.
func (p *parity) record(a attempt, v outcome.Verdict, d time.Duration) {
	if a.admitted {
		p.real.b.Record(a.real, v, d)
	}
	p.shadow.b.Record(a.shadow, v, d)
	p.quiet.b.Record(a.quiet, v, d)
}

// done is record through Done, at the clocks' time.
func (p *parity) done(a attempt, v outcome.Verdict) {
	if a.admitted {
		p.real.b.Done(a.real, v)
	}
	p.shadow.b.Done(a.shadow, v)
	p.quiet.b.Done(a.quiet, v)
}

// call is one whole attempt: an admission, a duration, and its outcome.
func (p *parity) call(t *rapid.T, v outcome.Verdict) {
	p.admit(t)
	a := p.inflight[len(p.inflight)-1]
	p.inflight = p.inflight[:len(p.inflight)-1]
	p.advance(breakertest.Durations().Draw(t, "duration"))
	p.done(a, v)
}

// check compares the three breakers: the same transitions (but for Shadow),
// the same rejections (the real refusals, the shadow would-be refusals), and
// the same snapshot and pressure.
func (p *parity) check(t *rapid.T) {
	live, shadow := p.real, p.shadow
	if len(live.transitions) != len(shadow.transitions) {
		t.Fatalf("real breaker made %d transitions, shadow %d:\nreal   %v\nshadow %v",
			len(live.transitions), len(shadow.transitions), live.transitions, shadow.transitions)
	}
	for i, r := range live.transitions {
		s := shadow.transitions[i]
		if r.Shadow || !s.Shadow {
			t.Fatalf("transition %d: Shadow %v on the real breaker's, %v on the shadow one's", i, r.Shadow, s.Shadow)
		}
		s.Shadow = false
		if r != s {
			t.Fatalf("transition %d: real %+v, shadow %+v", i, r, s)
		}
	}
	if len(live.rejections) != len(shadow.rejections) {
		t.Fatalf("real breaker refused %d attempts, shadow would have refused %d", len(live.rejections), len(shadow.rejections))
	}
	for i, r := range live.rejections {
		s := shadow.rejections[i]
		if r.Shadow || !s.Shadow {
			t.Fatalf("rejection %d: Shadow %v on the real breaker's, %v on the shadow one's", i, r.Shadow, s.Shadow)
		}
		s.Shadow = false
		if r != s {
			t.Fatalf("rejection %d: real %+v, shadow %+v", i, r, s)
		}
	}
	want := live.b.Snapshot()
	if want.Shadow {
		t.Fatalf("the real breaker's snapshot says Shadow")
	}
	for _, w := range []*twin{shadow, p.quiet} {
		got := w.b.Snapshot()
		if !got.Shadow || !w.b.Shadow() {
			t.Fatalf("a shadow breaker reads Shadow %v, snapshot %v", w.b.Shadow(), got.Shadow)
		}
		got.Shadow = false
		if got != want {
			t.Fatalf("snapshots differ at +%v:\nreal   %+v\nshadow %+v", p.real.clock.Since(epoch), want, got)
		}
		if got, want := w.b.Pressure(), live.b.Pressure(); got != want {
			t.Fatalf("pressure: real %v, shadow %v", want, got)
		}
	}
}

// TestShadowMakesTheSameTransitions is the contract of shadow mode: a breaker in
// shadow mode and a real one, with the same configuration and random source,
// fed the same attempts on clocks that move together, make the same
// transitions at the same instants with the same breaks, and their snapshots
// agree; the shadow one admits every attempt the real one refuses, raises the
// same Rejection for it, and ignores its outcome, whatever it is.
func TestShadowMakesTheSameTransitions(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := breakertest.Configs().Draw(t, "config")
		if rapid.Bool().Draw(t, "always a ramp") {
			cfg.Recovery = breakertest.Recoveries().Draw(t, "Recovery")
		}
		seed := rapid.Uint64().Draw(t, "seed")
		p := &parity{
			real:   newTwin(t, cfg, seed, false, true),
			shadow: newTwin(t, cfg, seed, true, true),
			quiet:  newTwin(t, cfg, seed, true, false),
		}
		t.Repeat(map[string]func(*rapid.T){
			"admit": p.admit,
			"record": func(t *rapid.T) {
				p.record(p.take(t), breakertest.Verdicts().Draw(t, "verdict"), breakertest.Durations().Draw(t, "duration"))
			},
			"done": func(t *rapid.T) {
				a := p.take(t)
				p.advance(breakertest.Durations().Draw(t, "duration"))
				p.done(a, breakertest.Verdicts().Draw(t, "verdict"))
			},
			"call":    func(t *rapid.T) { p.call(t, breakertest.Verdicts().Draw(t, "verdict")) },
			"advance": func(t *rapid.T) { p.advance(breakertest.Advances().Draw(t, "advance")) },
			"advance to break end": func(t *rapid.T) {
				if d := p.real.b.Snapshot().BreakEnds.Sub(p.real.clock.Now()); d > 0 {
					p.advance(d)
				}
			},
			"burst": func(t *rapid.T) {
				// Calls a few milliseconds apart, failing one in every few or
				// drawn one by one: enough to reach the ratio trips, the measured
				// normals and a ramp's end.
				gap := rapid.SampledFrom([]time.Duration{0, time.Millisecond, 100 * time.Millisecond}).Draw(t, "gap")
				every := rapid.SampledFrom([]int{-1, 0, 1, 2, 5}).Draw(t, "one failure every")
				for i := range rapid.IntRange(1, 40).Draw(t, "calls") {
					p.advance(gap)
					v := outcome.Verdict{}
					switch {
					case every < 0:
						v = breakertest.Verdicts().Draw(t, "verdict")
					case every > 0 && i%every == every-1:
						v = fail
					}
					p.call(t, v)
				}
			},
			"manual": func(t *rapid.T) {
				switch rapid.IntRange(0, 3).Draw(t, "manual") {
				case 0:
					for _, w := range p.twins() {
						w.b.Isolate()
					}
				case 1:
					d := breakertest.Advances().Draw(t, "IsolateFor")
					for _, w := range p.twins() {
						w.b.IsolateFor(d)
					}
				default:
					for _, w := range p.twins() {
						w.b.Reset()
					}
				}
			},
			"": p.check,
		})
	})
}
