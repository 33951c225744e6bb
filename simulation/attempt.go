package simulation

import (
	"github.com/resilience-go/pipeline/internal/hedgerule"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/throttle"
)

// An attempt runs as the card runs it: the breaker admits it once; inside the
// breaker the hedge sends its first copy and, while no copy has answered
// acceptably, its hedges; inside the hedge each copy has its own attempt timeout.
// The hedge's decisions are the hedge stage's own (hedge.Policy.Delay and
// Permit, hedge.Acceptable); its race is the stage's call, applied to events
// instead of goroutines and timers; TestHedgeMatchesHedgeStage
// holds the two together. At equal times, a copy's end is handled before a hedge
// falling due: the end was always scheduled first.

// start starts call id's next attempt: the breaker admits or refuses it, and an
// admitted attempt sends its first copy to the dependency and, when the hedge is
// armed, schedules its first hedge.
func (s *sim) start(id int32) {
	c := &s.calls[id]
	p := &s.procs[c.proc]
	c.attempt++
	c.ticket, c.pass = breaker.Ticket{}, throttle.Ticket{}
	refused := outcome.Verdict{Kind: outcome.Throttled, SelfImposed: true}
	c.verdict, c.cut = refused, false // until an attempt runs
	if p.gate != nil {
		t, err := p.gate.Admit()
		if err != nil {
			s.rec.r.ThrottleRefusals++
			s.finish(id, p.loop.after(c.attempt, refused, s.Clock.Now(), c.deadline))
			return
		}
		c.pass = t
	}
	if p.breaker != nil {
		s.sampleRamp(p)
		t, err := p.breaker.Admit()
		if err != nil {
			if p.gate != nil {
				p.gate.Record(c.pass, refused) // counts for nothing: our own refusal
			}
			s.finish(id, p.loop.after(c.attempt, refused, s.Clock.Now(), c.deadline))
			return
		}
		c.ticket = t
	}
	s.tags++
	c.tag, c.started, c.over = s.tags, s.Now, false
	c.copies, c.running, c.winner, c.last = c.copies[:0], 0, -1, 0
	delay, armed := p.hedge.armed(s.Now)
	s.rec.attempt(s.Now, c.ticket.Probe())
	s.send(id)
	if armed {
		c.delay = delay
		s.push(s.Now+delay, evHedge, id, c.tag)
	}
}

// hedge handles call id's hedge falling due: unless the breaker is under
// pressure or the budget cannot pay, it sends the next copy and, below
// MaxAttempts copies, schedules the one after. A refused hedge ends the
// attempt's hedging; the copies sent run on.
func (s *sim) hedge(id int32) {
	c := &s.calls[id]
	p := &s.procs[c.proc]
	if p.hedge.refuse() {
		s.rec.hedgeSkipped()
		return
	}
	s.rec.attempt(s.Now, false)
	s.rec.hedgeSent(s.Now, c.delay)
	s.send(id)
	if len(c.copies) < p.hedge.maxAttempts {
		s.push(s.Now+c.delay, evHedge, id, c.tag)
	}
}

// send sends the next copy of call id's attempt to the dependency and schedules
// its end. A copy longer than its limit (the attempt timeout, or what is left
// of the call's deadline) is cut there as a Transient failure.
func (s *sim) send(id int32) {
	c := &s.calls[id]
	limit := s.cfg.Client.AttemptTimeout
	if !c.deadline.IsZero() {
		left := c.deadline.Sub(s.Clock.Now())
		if limit == 0 || left < limit {
			limit = left
		}
	}
	r := s.dep.Respond(Attempt{At: s.Now, Limit: limit, InFlight: s.inFlight, Rand: s.rand, call: c.n, copy: len(c.copies)})
	took, v := max(r.Latency, 0), r.Verdict
	if s.procs[c.proc].limit != nil {
		s.rec.held(s.Now, s.Now+took) // the dependency holds it for all of its time, cut or not
	}
	cut := limit > 0 && took >= limit
	if cut {
		took, v = limit, outcome.Verdict{Kind: outcome.Transient} // our timeout
	}
	s.tags++
	c.copies = append(c.copies, attemptCopy{tag: s.tags, start: s.Now, end: s.Now + took, verdict: v, cut: cut})
	c.running++
	s.inFlight++
	s.push(s.Now+took, evEnd, id, s.tags)
}

// copyTagged returns the index of the copy of c's attempt tagged tag, or -1.
func (c *call) copyTagged(tag uint64) int {
	for k := range c.copies {
		if c.copies[k].tag == tag {
			return k
		}
	}
	return -1
}

// end settles the copy of call id tagged tag, which has ended, as the hedge
// stage settles a copy: a success is measured with its own duration; the first
// acceptable result wins and cancels the other copies (they stop loading the
// dependency now), and if a hedge won while the first copy still ran, the first
// copy is measured with the time it has run. When a copy won, or none is left running, the
// attempt ends.
func (s *sim) end(id int32, tag uint64) {
	c := &s.calls[id]
	h := s.procs[c.proc].hedge
	k := c.copyTagged(tag)
	a := &c.copies[k]
	a.done = true
	c.running--
	s.inFlight--
	c.last = k
	if a.verdict.Kind == outcome.OK {
		a.measured = true
		h.record(s.Now, s.Now-a.start)
	}
	if c.winner < 0 && hedgerule.Acceptable(a.verdict) {
		c.winner = k
		if first := &c.copies[0]; k > 0 && !first.done && !first.measured {
			first.measured = true
			h.record(s.Now, s.Now-first.start)
		}
		for i := range c.copies {
			if !c.copies[i].done {
				c.copies[i].done = true
				c.running--
				s.inFlight--
			}
		}
	}
	if c.winner < 0 && c.running > 0 {
		return
	}
	s.endAttempt(id)
}

// endAttempt ends call id's attempt, all of whose copies have ended or been
// cancelled: the breaker records its verdict (the winner's, or the last
// failure's) and its duration, and the retry rules decide whether the call is
// over. The slow judge, if any, judges the attempt just before the breaker
// records it.
func (s *sim) endAttempt(id int32) {
	c := &s.calls[id]
	p := &s.procs[c.proc]
	c.over = true
	kept := c.winner
	if kept < 0 {
		kept = c.last
	}
	if kept > 0 && kept == c.winner {
		s.rec.hedgeWon()
	}
	v, took := c.copies[kept].verdict, s.Now-c.started
	c.verdict, c.cut = v, c.copies[kept].cut
	if s.onAttempt != nil {
		s.onAttempt(c.n, c.copies, kept, took)
	}
	var j judgement
	judged := false
	if p.judge != nil {
		if j, judged = p.judge.judge(s.Now, v, took, p.breaker); judged {
			s.rec.judged(s.Now, j)
		}
	}
	if p.breaker != nil {
		p.breaker.Record(c.ticket, v, took)
	}
	if p.gate != nil {
		p.gate.Record(c.pass, v)
	}
	if p.judge != nil && s.onJudged != nil {
		s.onJudged(j, judged)
	}
	st := p.loop.after(c.attempt, v, s.Clock.Now(), c.deadline)
	if !st.served && st.reason == 0 {
		s.push(s.Now+st.wait, evStart, id, 0)
		return
	}
	s.finish(id, st)
}
