package throttle_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/throttle"
)

// script is a rand.Source that returns the draw the test set last, and
// counts how often it was asked.
type script struct {
	next  uint64 // below 2^53: rand.Rand.Float64 reads it as next / 2^53
	calls int
}

func (s *script) Uint64() uint64 { s.calls++; return s.next }

// model is the reference throttle: every request it has counted, with the
// slice of its admission, and the rule computed from scratch over the
// slices the window holds at now.
type model struct {
	k, maxRejection float64
	width           time.Duration
	slices          int64
	now             time.Duration // since the throttle was built
	counted         []request
}

type request struct {
	slice    int64
	accepted bool
}

func (m *model) slice() int64 { return int64(m.now / m.width) }

// inside reports whether the window at now holds slice k.
func (m *model) inside(k int64) bool { return k > m.slice()-m.slices }

func (m *model) counts() (requests, accepts int) {
	for _, r := range m.counted {
		if m.inside(r.slice) {
			requests++
			if r.accepted {
				accepts++
			}
		}
	}
	return requests, accepts
}

func (m *model) probability() float64 {
	r, a := m.counts()
	p := (float64(r) - m.k*float64(a)) / float64(r+1)
	return min(max(p, 0), m.maxRejection)
}

// held is an admitted attempt not yet recorded.
type held struct {
	tk    throttle.Ticket
	slice int64
}

// machine drives a Throttle and the model with random admissions (each with
// a draw of its own), verdicts of every kind, recorded in any order, and
// clock advances.
type machine struct {
	th    *throttle.Throttle
	clock *clockwork.FakeClock
	rng   *script
	m     model
	held  []held
}

var (
	ks            = []float64{1, 1.5, 2, 3, 10}
	maxRejections = []float64{0.5, throttle.DefaultMaxRejection, 1}
	allVerdicts   = []outcome.Verdict{
		{},                        // OK
		{Kind: outcome.Transient}, // a 503, our timeout
		{Kind: outcome.Throttled}, // a 429
		{Kind: outcome.Permanent}, // a 400
		{Kind: outcome.Permanent, Canceled: true},    // the caller's cancellation
		{Kind: outcome.Throttled, SelfImposed: true}, // a refusal of an inner stage
	}
)

func newMachine(t *rapid.T) *machine {
	clock := clockwork.NewFakeClock()
	rng := &script{}
	cfg := throttle.Config{
		K:            rapid.SampledFrom(ks).Draw(t, "K"),
		Window:       time.Duration(rapid.Int64Range(1, 120).Draw(t, "windowSeconds")) * time.Second,
		Buckets:      rapid.IntRange(1, 20).Draw(t, "buckets"),
		MaxRejection: rapid.SampledFrom(maxRejections).Draw(t, "maxRejection"),
		Clock:        clock,
		Rand:         rng,
	}
	th, err := throttle.New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return &machine{th: th, clock: clock, rng: rng, m: model{
		k: cfg.K, maxRejection: cfg.MaxRejection,
		width: cfg.Window / time.Duration(cfg.Buckets), slices: int64(cfg.Buckets),
	}}
}

func (s *machine) Admit(t *rapid.T) {
	draw := rapid.Uint64Range(0, 1<<53-1).Draw(t, "draw")
	s.rng.next = draw
	p := s.m.probability()
	calls := s.rng.calls
	tk, err := s.th.Admit()
	if p == 0 && s.rng.calls != calls {
		t.Fatalf("Admit drew from the source with a probability of 0")
	}
	if want := p > 0 && float64(draw)/(1<<53) < p; (err != nil) != want {
		t.Fatalf("Admit refused: %v with a probability of %v and a draw of %v", err != nil, p, float64(draw)/(1<<53))
	}
	if err != nil {
		stop, isStop := errors.AsType[*pipeline.StopError](err)
		if !isStop || stop.Stage != "throttle" || stop.Reason != pipeline.DependencyUnavailable || !errors.Is(err, pipeline.DependencyUnavailable) {
			t.Fatalf("Admit refused with %v, want the throttle's refusal", err)
		}
		if tk != (throttle.Ticket{}) {
			t.Fatalf("a refusal with the ticket %+v, want the zero Ticket", tk)
		}
		s.m.counted = append(s.m.counted, request{slice: s.m.slice()})
		return
	}
	s.held = append(s.held, held{tk, s.m.slice()})
}

func (s *machine) Record(t *rapid.T) {
	if len(s.held) == 0 {
		t.Skip("nothing in flight")
	}
	i := rapid.IntRange(0, len(s.held)-1).Draw(t, "which")
	h := s.held[i]
	s.held = append(s.held[:i], s.held[i+1:]...)
	v := rapid.SampledFrom(allVerdicts).Draw(t, "verdict")
	s.th.Record(h.tk, v)
	if v.SelfImposed || v.Canceled || !s.m.inside(h.slice) {
		return
	}
	s.m.counted = append(s.m.counted, request{slice: h.slice, accepted: v.Kind == outcome.OK || v.Kind == outcome.Permanent})
}

func (s *machine) RecordRefusal(t *rapid.T) {
	s.th.Record(throttle.Ticket{}, rapid.SampledFrom(allVerdicts).Draw(t, "verdict"))
}

func (s *machine) Advance(t *rapid.T) {
	d := time.Duration(rapid.OneOf(
		rapid.Int64Range(0, int64(s.m.width)),
		rapid.Int64Range(0, int64(s.m.width)*s.m.slices),
		rapid.Int64Range(0, 3*int64(s.m.width)*s.m.slices),
	).Draw(t, "advance"))
	s.clock.Advance(d)
	s.m.now += d
}

// Check holds the throttle to the model after every step: the same counts
// and the same probability, within [0, MaxRejection], and 0 whenever the
// requests are at most K times the accepts, so in particular whenever every
// request in the window was accepted.
func (s *machine) Check(t *rapid.T) {
	requests, accepts := s.th.Counts()
	wantR, wantA := s.m.counts()
	if requests != wantR || accepts != wantA {
		t.Fatalf("Counts = (%d, %d), want (%d, %d)", requests, accepts, wantR, wantA)
	}
	p := s.th.RejectionProbability()
	if want := s.m.probability(); p != want {
		t.Fatalf("RejectionProbability = %v, want %v", p, want)
	}
	if p < 0 || p > s.m.maxRejection {
		t.Fatalf("probability %v outside [0, %v]", p, s.m.maxRejection)
	}
	if float64(requests) <= s.m.k*float64(accepts) && p != 0 {
		t.Fatalf("probability %v with %d requests and %d accepts at K %v", p, requests, accepts, s.m.k)
	}
}

func TestTheThrottleMatchesTheModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		t.Repeat(rapid.StateMachineActions(newMachine(t)))
	})
}

// TestNoFailureNoRefusal drives a throttle with calls whose verdicts are
// anything but a failure or a 429 (successes, Permanent answers,
// cancellations, refusals of an inner stage), at random times and draws,
// some left in flight: it refuses none of them, and its probability stays 0.
func TestNoFailureNoRefusal(t *testing.T) {
	harmless := []outcome.Verdict{allVerdicts[0], allVerdicts[3], allVerdicts[4], allVerdicts[5]}
	rapid.Check(t, func(t *rapid.T) {
		clock := clockwork.NewFakeClock()
		th, err := throttle.New(throttle.Config{
			K:            rapid.SampledFrom(ks).Draw(t, "K"),
			MaxRejection: rapid.SampledFrom(maxRejections).Draw(t, "maxRejection"),
			Clock:        clock,
			Rand:         rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 0),
		})
		if err != nil {
			t.Fatal(err)
		}
		var inFlight []throttle.Ticket
		for range rapid.IntRange(1, 300).Draw(t, "calls") {
			clock.Advance(time.Duration(rapid.Int64Range(0, int64(time.Minute)).Draw(t, "advance")))
			tk, err := th.Admit()
			if err != nil {
				t.Fatalf("refused with no failure: %v", err)
			}
			inFlight = append(inFlight, tk)
			if n := rapid.IntRange(0, len(inFlight)).Draw(t, "answered"); n > 0 {
				for _, tk := range inFlight[:n] {
					th.Record(tk, rapid.SampledFrom(harmless).Draw(t, "verdict"))
				}
				inFlight = inFlight[n:]
			}
			if p := th.RejectionProbability(); p != 0 {
				t.Fatalf("probability %v with no failure", p)
			}
		}
	})
}

// history runs a random stretch of the state machine's actions, failures
// included, and returns the machine.
func history(t *rapid.T) *machine {
	s := newMachine(t)
	for range rapid.IntRange(0, 200).Draw(t, "steps") {
		switch rapid.IntRange(0, 3).Draw(t, "op") {
		case 0, 1:
			s.Admit(t)
		case 2:
			if len(s.held) > 0 {
				s.Record(t)
			}
		case 3:
			s.Advance(t)
		}
	}
	return s
}

// TestRecovery checks that the probability falls back to 0 once the
// failures stop, whatever came before: at once when the window slides past
// them, and, for K above 1, after at most (requests - K × accepts)/(K - 1)
// accepted calls with no time passing, falling at every one (or staying at
// the cap while the rule falls beneath it).
func TestRecovery(t *testing.T) {
	t.Run("the window slides past the failures", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			s := history(t)
			s.clock.Advance(time.Duration(s.m.slices) * s.m.width)
			for _, h := range s.held { // answers that come after their slice left
				s.th.Record(h.tk, allVerdicts[1])
			}
			if r, a := s.th.Counts(); r != 0 || a != 0 {
				t.Fatalf("a window later, Counts = (%d, %d), want none", r, a)
			}
			if p := s.th.RejectionProbability(); p != 0 {
				t.Fatalf("a window later, probability %v", p)
			}
		})
	})
	t.Run("accepts return", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			s := history(t)
			if s.m.k == 1 {
				t.Skip("at K 1, accepts never outweigh a failure: only the window forgets it")
			}
			r, a := s.th.Counts()
			most := int(math.Ceil((float64(r)-s.m.k*float64(a))/(s.m.k-1))) + 1
			s.rng.next = 1<<53 - 1 // a draw above any probability: nothing is refused
			p := s.th.RejectionProbability()
			for i := 0; p > 0; i++ {
				if i > most {
					t.Fatalf("probability %v after %d accepted calls, from (%d, %d) at K %v", p, i, r, a, s.m.k)
				}
				tk, err := s.th.Admit()
				if err != nil {
					t.Fatalf("refused with a draw of 1 - 2^-53 at probability %v", p)
				}
				s.th.Record(tk, outcome.Verdict{})
				next := s.th.RejectionProbability()
				if next > p || next == p && p < s.m.maxRejection { // at the cap, the rule falls beneath it
					t.Fatalf("an accepted call moved the probability from %v to %v", p, next)
				}
				p = next
			}
		})
	})
}

// TestTheRefusedShareMatchesTheProbability builds a throttle on a seeded
// PCG, gives it a random history of failures and accepts, then asks it to
// admit many attempts, and compares the number refused with the sum of the
// probabilities read before each: its expectation. They agree within five
// standard deviations, plus one. (The admitted attempts are recorded as
// canceled, so the probability moves only with the refusals.)
func TestTheRefusedShareMatchesTheProbability(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		th, err := throttle.New(throttle.Config{
			K:            rapid.SampledFrom(ks).Draw(t, "K"),
			MaxRejection: rapid.SampledFrom(maxRejections).Draw(t, "maxRejection"),
			Clock:        clockwork.NewFakeClock(),
			Rand:         rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 1),
		})
		if err != nil {
			t.Fatal(err)
		}
		failures := rapid.IntRange(0, 2000).Draw(t, "failures")
		accepted := rapid.IntRange(0, 2000).Draw(t, "accepts")
		for i := range failures + accepted {
			tk, err := th.Admit()
			if err != nil {
				continue
			}
			v := outcome.Verdict{}
			if i < failures {
				v.Kind = outcome.Transient
			}
			th.Record(tk, v)
		}
		var refused int
		var expected, variance float64
		const admissions = 5000
		for range admissions {
			p := th.RejectionProbability()
			expected += p
			variance += p * (1 - p)
			tk, err := th.Admit()
			if err != nil {
				refused++
				continue
			}
			th.Record(tk, outcome.Verdict{Kind: outcome.Permanent, Canceled: true})
		}
		if tolerance := 5*math.Sqrt(variance) + 1; math.Abs(float64(refused)-expected) > tolerance {
			t.Fatalf("refused %d of %d, expected %.1f ± %.1f", refused, admissions, expected, tolerance)
		}
	})
}
