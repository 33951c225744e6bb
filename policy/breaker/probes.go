package breaker

import "time"

// probes is the half-open phase: its probe slots, and the leads of fast
// over slow successful probes that decide it (see Config.ProbeSuccesses).
type probes struct {
	slots     []slot // len Config.HalfOpenProbes
	lastID    uint64 // the most recent slot id handed out; starts at ordinary
	successes int    // fast successful probes in the current phase
	slow      int    // slow successful probes in the current phase (isSlowProbe)
}

// slot is one half-open probe slot. An id of 0 means free.
type slot struct {
	id      uint64
	expires instant
}

// free frees the slots that have expired at now (their probes never
// reported in time) and returns the index of a free one, or -1.
func (p *probes) free(now instant) int {
	free := -1
	for i := range p.slots {
		s := &p.slots[i]
		if s.id != 0 && !now.Before(s.expires) {
			s.id = 0
		}
		if s.id == 0 && free < 0 {
			free = i
		}
	}
	return free
}

// take gives the free slot i, for life, to an attempt admitted at now.
func (p *probes) take(i int, now instant, life time.Duration) Ticket {
	p.lastID++
	p.slots[i] = slot{id: p.lastID, expires: now.Add(life)}
	return Ticket{start: now, id: p.lastID}
}

// release frees the slot id and reports whether it was held and unexpired,
// so that its outcome counts.
func (p *probes) release(now instant, id uint64) bool {
	if id <= ordinary {
		return false
	}
	for i := range p.slots {
		if s := &p.slots[i]; s.id == id {
			s.id = 0
			return now.Before(s.expires)
		}
	}
	return false
}

// reset forgets the phase: its leads and every slot.
func (p *probes) reset() {
	p.successes, p.slow = 0, 0
	clear(p.slots)
}

// recordProbe applies the outcome of an attempt t that a HalfOpen breaker
// admitted. Call it with mu held.
func (b *Breaker) recordProbe(now instant, t Ticket, failure, success bool, d time.Duration) {
	if !b.probes.release(now, t.id) {
		return // not a current probe: a straggler, or a probe whose slot expired
	}
	p := &b.probes
	switch {
	case failure:
		b.trip(now, CauseProbeFailed)
	case !success:
	case b.isSlowProbe(now, d):
		// The phase is decided by leads (see Config.ProbeSuccesses): one
		// slow probe is a healthy heavy tail as often as it is a sick
		// dependency.
		if p.slow++; p.slow-p.successes < b.cfg.probeSlowLead {
			break
		}
		if !b.cfg.ramp {
			b.trip(now, CauseProbeSlow) // not a recovery
			break
		}
		b.startRamp(now, CauseProbeSlow) // up, and not ready: ramp, held
		b.hold(now)
	default:
		if p.successes++; p.successes-p.slow < b.cfg.probeSuccesses {
			break
		}
		if b.cfg.ramp {
			b.startRamp(now, CauseProbesSucceeded)
		} else {
			b.close(now)
		}
	}
}
