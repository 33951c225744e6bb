package breakertest

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/jonboulle/clockwork"
	"pgregory.net/rapid"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// StateMachine returns a rapid property that builds a breaker from cfg on a fake
// clock (cfg's Clock, Rand and OnEvent are replaced) and, beside it, a
// reference model of its state machine written for clarity rather than speed,
// runs random operations on both (admissions, outcomes of every kind and
// duration, clock advances, Isolate, IsolateFor, Reset, SetShadow, state reads)
// and fails on the first step where
//
//   - the breaker and the model disagree on an admission, a retry-after hint or
//     any field of [breaker.Snapshot];
//   - the breaker admits while Open before its break ends (but for the
//     trickle's probes, below), or while Isolated, other than in shadow mode,
//     where it must admit everything, and mark as Shadow exactly the tickets
//     of the attempts the model refuses;
//   - a refusal, real or in shadow mode, raises no Rejection event, or one
//     whose state, hint or Shadow field is wrong, or an admission raises one;
//   - more probes hold slots than Config.HalfOpenProbes;
//   - it closes from HalfOpen before its fast probes lead its slow ones by
//     Config.ProbeSuccesses, or re-opens on slow probes before they lead the
//     fast ones by Config.ProbeSlowLead;
//   - Pressure differs from the model's (which keeps the relative trip's
//     two-failure rule, and reads 1 unless Closed);
//   - reading the state (State, Snapshot, NormalLatency, NormalFailureRate)
//     changes anything;
//   - a break is outside its jitter bounds or the growth cap (a break from
//     IsolateFor is exactly its duration instead);
//   - transition events do not form one ordered chain, or differ from the
//     model's in states, cause, break or Shadow;
//   - a measured normal is cleared: by Isolate, IsolateFor or Reset (which
//     must leave both exactly as they were), by an outcome recorded while not
//     Closed (which must not touch them), or by any outcome at all (a normal
//     that was armed stays armed at the same instant);
//   - IsolateFor changes the count of trips or the nominal break;
//   - the relative trip fires with fewer than two failures or MinimumCalls
//     samples in the trip window, or fewer than Failures.MinimumSamples in its
//     baseline;
//   - a measurement loosens a constant: the effective slow-call threshold is
//     above Config.SlowCallThreshold, or the effective trip point above
//     Config.FailureRatio;
//   - a recovery ramp breaks its rules: it is entered without Config.Recovery,
//     or from anything but HalfOpen on a lead of fast or of slow probes;
//     over the offers of one ramp, the admitted count differs from the floor
//     of the summed admitted fraction p by more than one; p falls below
//     Recovery.Initial or reaches 1 without reading Closed; the ramp's length
//     leaves [Recovery.Minimum, Recovery.Maximum]; a failure of an attempt
//     the ramp admitted raises p, or leaves Recovering other than to Open on
//     CauseRampFailed; it leaves Recovering other than by failures, by
//     running out, by Reset, Isolate or IsolateFor (so no slow call ever
//     trips it);
//   - an Open breaker admits anything but a probe of the trickle, during a
//     break a trip started with Config.Recovery set (the model decides which:
//     Recovery.Initial of the offers, and one every Recovery.TrickleEvery).
//
// The breaker starts in the mode cfg.Shadow says, and the property switches
// the mode at random as it goes ([Configs] always leaves Shadow false, so the
// mode changes only that way).
//
// Use it as rapid.Check(t, breakertest.StateMachine(cfg)).
func StateMachine(cfg breaker.Config) func(*rapid.T) {
	return func(t *rapid.T) {
		if err := cfg.Validate(); err != nil {
			t.Fatalf("invalid config: %v", err)
		}
		clock := clockwork.NewFakeClockAt(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
		var events []breaker.Transition
		var rejections []breaker.Rejection
		c := cfg
		c.Clock = clock
		c.Rand = rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 0)
		c.OnEvent = func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
			switch e := e.(type) {
			case breaker.Transition:
				events = append(events, e)
			case breaker.Rejection:
				rejections = append(rejections, e)
			}
		}
		b, err := breaker.New(c)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		m := newModel(c, clock.Now())
		m.Served = func(time.Duration) time.Duration { return b.Snapshot().Break }
		h := &harness{b: b, m: m, clock: clock, events: &events, rejections: &rejections}
		t.Repeat(map[string]func(*rapid.T){
			"admit":   h.admit,
			"record":  h.record,
			"done":    h.done,
			"advance": func(t *rapid.T) { clock.Advance(Advances().Draw(t, "advance")) },
			"advance to break end": func(t *rapid.T) {
				if d := b.Snapshot().BreakEnds.Sub(clock.Now()); d > 0 {
					clock.Advance(d)
				}
			},
			"call":    h.call,
			"traffic": h.traffic,
			"failing calls": func(t *rapid.T) {
				for range rapid.IntRange(1, 6).Draw(t, "failures") {
					n := len(h.inflight)
					h.admit(t)
					h.finish(t, n, failure)
				}
			},
			"manual": func(t *rapid.T) {
				before := b.Snapshot()
				switch rapid.IntRange(0, 5).Draw(t, "manual") {
				case 0:
					b.Isolate()
					m.Isolate()
				case 1, 2:
					d := rapid.SampledFrom([]time.Duration{time.Nanosecond, time.Millisecond, time.Second, 15 * time.Second, 3 * time.Minute}).Draw(t, "IsolateFor")
					b.IsolateFor(d)
					m.IsolateFor(clock.Now(), d)
					if s := b.Snapshot(); s.Trips != before.Trips || s.Nominal != before.Nominal {
						t.Fatalf("IsolateFor changed the break growth: %d trips, nominal %v, then %d, %v",
							before.Trips, before.Nominal, s.Trips, s.Nominal)
					}
				default:
					b.Reset()
					m.Reset()
				}
				if got, want := normals(b.Snapshot()), normals(before); got != want {
					t.Fatalf("Isolate, IsolateFor or Reset changed the measured normals: %+v, then %+v", want, got)
				}
			},
			"shadow": func(t *rapid.T) {
				on := rapid.IntRange(0, 2).Draw(t, "shadow") == 0
				b.SetShadow(on)
				m.SetShadow(on)
				if b.Shadow() != on {
					t.Fatalf("SetShadow(%v), then Shadow() = %v", on, b.Shadow())
				}
			},
			"read": h.read,
			"":     h.check,
		})
	}
}

type harness struct {
	b          *breaker.Breaker
	m          *model
	clock      *clockwork.FakeClock
	events     *[]breaker.Transition
	rejections *[]breaker.Rejection
	inflight   []flight
	ramp       rampRun
}

type flight struct {
	real  breaker.Ticket
	model modelTicket
	ramp  int // the number of the ramp that admitted it (see rampsStarted), or 0
}

func (h *harness) admit(t *rapid.T) {
	now := h.clock.Now()
	pre := h.b.Snapshot()
	was := h.b.State()
	rejected := len(*h.rejections)
	tk, err := h.b.Admit()
	mt, retry := h.m.Admit(now)
	admitted := err == nil && !tk.Shadow()
	ramp := h.offered(t, pre, admitted)
	trickled := was == breaker.Open && h.m.trickle.on && tk.Probe()
	if admitted && (was == breaker.Open || was == breaker.Isolated) && !trickled {
		t.Fatalf("admitted while %v, and not as a probe of a trip's trickle", was)
	}
	if err != nil && pre.Shadow {
		t.Fatalf("refused in shadow mode: %v", err)
	}
	if tk.Shadow() && !pre.Shadow {
		t.Fatalf("a shadow ticket from a breaker not in shadow mode")
	}
	if mt.Admitted != (err == nil) || mt.Shadow != tk.Shadow() {
		t.Fatalf("admission: breaker err=%v shadow=%v, model admits=%v shadow=%v", err, tk.Shadow(), mt.Admitted, mt.Shadow)
	}
	h.rejected(t, rejected, !admitted, pre, retry)
	if err != nil {
		var se *pipeline.StopError
		if !errors.As(err, &se) || se.Stage != "breaker" || se.Reason != pipeline.DependencyUnavailable {
			t.Fatalf("refusal is not a breaker StopError: %#v", err)
		}
		if se.RetryAfter != retry {
			t.Fatalf("retry-after: breaker %v, model %v", se.RetryAfter, retry)
		}
		return
	}
	if tk.Probe() != (mt.Probe != 0) {
		t.Fatalf("probe: breaker %v, model %v", tk.Probe(), mt.Probe != 0)
	}
	h.inflight = append(h.inflight, flight{tk, mt, ramp})
}

// rejected checks the Rejection events raised by one admission, counting from
// the n-th: one for a refusal (refused; in shadow mode, an admission only
// shadow mode made), with the state pre read and the model's hint retry, and
// none otherwise.
func (h *harness) rejected(t *rapid.T, n int, refused bool, pre breaker.Snapshot, retry time.Duration) {
	got := (*h.rejections)[n:]
	if !refused {
		if len(got) != 0 {
			t.Fatalf("an admission raised %v", got)
		}
		return
	}
	if len(got) != 1 {
		t.Fatalf("a refusal raised %d rejections, want 1: %v", len(got), got)
	}
	want := breaker.Rejection{State: pre.State, RetryAfter: retry, At: h.clock.Now(), Shadow: pre.Shadow}
	if got[0] != want {
		t.Fatalf("rejection %+v, want %+v", got[0], want)
	}
}

// take removes and returns a random attempt in flight, or skips the action.
func (h *harness) take(t *rapid.T) flight {
	if len(h.inflight) == 0 {
		t.Skip("nothing in flight")
	}
	i := rapid.IntRange(0, len(h.inflight)-1).Draw(t, "attempt")
	f := h.inflight[i]
	h.inflight = slices.Delete(h.inflight, i, i+1)
	return f
}

func (h *harness) record(t *rapid.T) {
	f := h.take(t)
	v, d := Verdicts().Draw(t, "verdict"), Durations().Draw(t, "duration")
	pre := h.observe()
	h.b.Record(f.real, v, d)
	h.m.Record(h.clock.Now(), f.model, v, d)
	h.recorded(t, pre, f, v)
}

// failure is the verdict of a failing call.
var failure = outcome.Verdict{Kind: outcome.Transient}

// call is one whole attempt: an admission and, if admitted, its outcome.
func (h *harness) call(t *rapid.T) {
	n := len(h.inflight)
	h.admit(t)
	if len(h.inflight) > n {
		h.finish(t, n, Verdicts().Draw(t, "verdict"))
	}
}

func (h *harness) done(t *rapid.T) {
	if len(h.inflight) == 0 {
		t.Skip("nothing in flight")
	}
	h.finish(t, rapid.IntRange(0, len(h.inflight)-1).Draw(t, "attempt"), Verdicts().Draw(t, "verdict"))
}

// finish ends attempt i with v, after a drawn duration, through Done.
func (h *harness) finish(t *rapid.T, i int, v outcome.Verdict) {
	if i >= len(h.inflight) {
		return // the admission was refused
	}
	f := h.inflight[i]
	h.inflight = slices.Delete(h.inflight, i, i+1)
	h.clock.Advance(Durations().Draw(t, "duration"))
	h.done1(t, f, v)
}

// done1 ends the attempt f with v through Done, at the clock's time.
func (h *harness) done1(t *rapid.T, f flight, v outcome.Verdict) {
	pre := h.observe()
	h.b.Done(f.real, v)
	now := h.clock.Now()
	h.m.Record(now, f.model, v, now.Sub(f.model.Start))
	h.recorded(t, pre, f, v)
}

// traffic is a burst of whole calls, a few milliseconds apart, whose durations
// share one scale and whose verdicts are either drawn one by one or follow a
// pattern of one failure every few successes: enough evidence to arm the
// baselines, and, from one burst to the next, the shifts of latency and failure
// rate that the measured normals exist to notice.
func (h *harness) traffic(t *rapid.T) {
	scale := Durations().Draw(t, "scale")
	gap := rapid.SampledFrom([]time.Duration{0, time.Millisecond, 100 * time.Millisecond}).Draw(t, "gap")
	every := rapid.SampledFrom([]int{-1, 0, 2, 3, 5, 20}).Draw(t, "one failure every") // -1: drawn; 0: none
	for i := range rapid.IntRange(1, 60).Draw(t, "calls") {
		h.clock.Advance(gap)
		n := len(h.inflight)
		h.admit(t)
		if len(h.inflight) == n {
			continue
		}
		f := h.inflight[n]
		h.inflight = h.inflight[:n]
		h.clock.Advance(scale + scale*time.Duration(rapid.IntRange(0, 3).Draw(t, "spread"))/4)
		v := outcome.Verdict{}
		switch {
		case every < 0:
			v = Verdicts().Draw(t, "verdict")
		case every > 0 && i%every == every-1:
			v = failure
		}
		h.done1(t, f, v)
	}
}

// prior is what the harness reads before an outcome is recorded.
type prior struct {
	snap                           breaker.Snapshot
	calls, failures, baselineCalls int
}

func (h *harness) observe() prior {
	now := h.clock.Now()
	calls, failures, _ := h.m.tripWindowCounts(now)
	baselineCalls, _ := h.m.baselineCounts(now)
	return prior{snap: h.b.Snapshot(), calls: calls, failures: failures, baselineCalls: baselineCalls}
}

// recorded checks what may change when one outcome v is recorded: the breaker
// closes from HalfOpen only after the required probe successes, the measured
// normals are never cleared, and the relative trip fires only on enough evidence.
func (h *harness) recorded(t *rapid.T, pre prior, f flight, v outcome.Verdict) {
	after := h.b.Snapshot()
	if lead := pre.snap.ProbeSuccesses + 1 - pre.snap.SlowProbes; pre.snap.State == breaker.HalfOpen &&
		after.State == breaker.Closed && lead != h.m.ProbeSuccesses {
		t.Fatalf("closed on a lead of %d fast probes, want %d", lead, h.m.ProbeSuccesses)
	}
	ev := *h.events
	if pre.snap.State == breaker.HalfOpen && after.State == breaker.Open && ev[len(ev)-1].Cause == breaker.CauseProbeSlow {
		if lead := pre.snap.SlowProbes + 1 - pre.snap.ProbeSuccesses; lead != h.m.ProbeSlowLead {
			t.Fatalf("re-opened on a lead of %d slow probes, want %d", lead, h.m.ProbeSlowLead)
		}
	}
	h.rampRecorded(t, pre, after, f, v)
	was, is := normals(pre.snap), normals(after)
	if pre.snap.State != breaker.Closed && was != is {
		t.Fatalf("an outcome recorded while %v changed the measured normals: %+v, then %+v", pre.snap.State, was, is)
	}
	if (was.LatencyOK && !is.LatencyOK) || (was.FailureRateOK && !is.FailureRateOK) {
		t.Fatalf("recording an outcome cleared a measured normal: %+v, then %+v", was, is)
	}
	if len(ev) == 0 || ev[len(ev)-1].Cause != breaker.CauseRelativeFailureRatio ||
		pre.snap.State != breaker.Closed || after.State != breaker.Open {
		return
	}
	failures := pre.failures
	if v.Failure() {
		failures++
	}
	switch {
	case failures < 2:
		t.Fatalf("relative trip with %d failure(s) in the trip window", failures)
	case pre.calls+1 < h.m.MinimumCalls:
		t.Fatalf("relative trip with %d samples in the trip window, want %d", pre.calls+1, h.m.MinimumCalls)
	case pre.baselineCalls+1 < h.m.FailuresMinimumSamples:
		t.Fatalf("relative trip on a baseline of %d samples, want %d", pre.baselineCalls+1, h.m.FailuresMinimumSamples)
	}
}

// measured is the part of a Snapshot that the measured normals make.
type measured struct {
	Latency       time.Duration
	LatencyOK     bool
	FailureRate   float64
	FailureRateOK bool
}

func normals(s breaker.Snapshot) measured {
	return measured{s.NormalLatency, s.NormalLatencyOK, s.NormalFailureRate, s.NormalFailureRateOK}
}

func (h *harness) read(t *rapid.T) {
	s := h.b.Snapshot()
	for range rapid.IntRange(1, 3).Draw(t, "reads") {
		if st := h.b.State(); st != s.State {
			t.Fatalf("State() = %v, Snapshot().State = %v", st, s.State)
		}
		if d, ok := h.b.NormalLatency(); d != s.NormalLatency || ok != s.NormalLatencyOK {
			t.Fatalf("NormalLatency() = %v, %v; Snapshot says %v, %v", d, ok, s.NormalLatency, s.NormalLatencyOK)
		}
		if r, ok := h.b.NormalFailureRate(); r != s.NormalFailureRate || ok != s.NormalFailureRateOK {
			t.Fatalf("NormalFailureRate() = %v, %v; Snapshot says %v, %v", r, ok, s.NormalFailureRate, s.NormalFailureRateOK)
		}
		if p, want := h.b.Pressure(), h.m.Pressure(h.clock.Now()); p != want {
			t.Fatalf("Pressure() = %v while %v, the model says %v", p, s.State, want)
		}
		if again := h.b.Snapshot(); again != s {
			t.Fatalf("reading changed the breaker: %+v then %+v", s, again)
		}
	}
}

func (h *harness) check(t *rapid.T) {
	now := h.clock.Now()
	got, want := h.b.Snapshot(), h.m.Snapshot(now)
	if got != want {
		t.Fatalf("breaker and model disagree at +%v:\nbreaker %+v\nmodel   %+v", now.Sub(h.m.Origin), got, want)
	}
	if h.m.Err != nil {
		t.Fatal(h.m.Err)
	}
	if c := h.m.SlowCallThreshold; c > 0 && (got.SlowCallThreshold <= 0 || got.SlowCallThreshold > c) {
		t.Fatalf("effective slow-call threshold %v with a constant of %v", got.SlowCallThreshold, c)
	}
	if c := h.m.FailureRatio; c > 0 && (got.FailureTripPoint <= 0 || got.FailureTripPoint > c) {
		t.Fatalf("effective failure trip point %v with a FailureRatio of %v", got.FailureTripPoint, c)
	}
	if got.Probes > h.m.Probes {
		t.Fatalf("%d probes in flight, at most %d allowed", got.Probes, h.m.Probes)
	}
	ev := *h.events
	if got.Trips > 0 {
		if got.Nominal < h.m.BreakDuration || got.Nominal > h.m.MaxBreak {
			t.Fatalf("nominal break %v outside [%v, %v]", got.Nominal, h.m.BreakDuration, h.m.MaxBreak)
		}
		if lo, hi := jitterBounds(h.m.Jitter, got.Nominal); !forced(ev) && (got.Break < lo || got.Break > hi) {
			t.Fatalf("break %v outside %v jitter bounds [%v, %v]", got.Break, h.m.Jitter, lo, hi)
		}
	}
	if len(ev) != len(h.m.Transitions) {
		t.Fatalf("%d transitions, the model made %d:\nbreaker %v\nmodel   %v", len(ev), len(h.m.Transitions), ev, h.m.Transitions)
	}
	for i, want := range h.m.Transitions {
		if e := ev[i]; e.From != want.From || e.To != want.To || e.Cause != want.Cause || e.Break != want.Break || e.Shadow != want.Shadow {
			t.Fatalf("transition %d: breaker %v->%v (%v, break %v, shadow %v), model %v->%v (%v, break %v, shadow %v)",
				i, e.From, e.To, e.Cause, e.Break, e.Shadow, want.From, want.To, want.Cause, want.Break, want.Shadow)
		}
	}
	for i := range ev {
		from := breaker.Closed
		if i > 0 {
			from = ev[i-1].To
		}
		if ev[i].From != from {
			t.Fatalf("event %d: transition from %v follows a transition to %v", i, ev[i].From, from)
		}
		checkRampTransition(t, i, ev[i])
	}
	if len(ev) > 0 {
		last := ev[len(ev)-1].To
		if last != got.State && !(last == breaker.Open && got.State == breaker.HalfOpen) &&
			!(last == breaker.Recovering && got.State == breaker.Closed) {
			t.Fatalf("last transition to %v, state %v", last, got.State)
		}
	}
	h.checkRamp(t, got)
}

// forced reports whether the latest break in the transitions ev came from
// IsolateFor, which serves its duration rather than a jittered nominal break.
func forced(ev []breaker.Transition) bool {
	for i := len(ev) - 1; i >= 0; i-- {
		if ev[i].To == breaker.Open {
			return ev[i].Cause == breaker.CauseForced
		}
	}
	return false
}
