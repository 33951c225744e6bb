package breaker

// shadowTicket is the id of a Ticket for an attempt that only shadow mode
// admitted: rampTicket with ramp number 0, which no ramp has (ramps are
// numbered from 1), so it is neither a probe nor a ramp's attempt.
const shadowTicket = rampTicket

// Shadow reports whether t admits an attempt that the breaker would have
// refused had it not been in shadow mode (see [Config.Shadow]). The breaker
// ignores the outcome of such an attempt, since a real breaker would never have
// run it; recording it is still allowed, and does nothing.
func (t Ticket) Shadow() bool { return t.id == shadowTicket }

// SetShadow puts the breaker in shadow mode (on) or takes it out of it (off);
// see [Config.Shadow]. The change is atomic and takes effect for the next
// admission: an admission already deciding finishes in the mode it started in,
// and the outcomes of attempts admitted before the change keep their meaning
// (those admitted only by shadow mode stay ignored). The state machine is not
// touched: a shadow breaker that is Open when shadow mode ends is a real open
// breaker, refusing for the rest of its break.
func (b *Breaker) SetShadow(on bool) {
	if !b.built() {
		panic(notBuilt)
	}
	b.mu.Lock()
	b.shadow.Store(on)
	b.mu.Unlock()
}

// Shadow reports whether the breaker is in shadow mode (see [Config.Shadow]).
// It takes no lock. The hedge stage reads it: a shadow breaker must not
// change what the pipeline does, so the hedge ignores its [Breaker.Pressure].
func (b *Breaker) Shadow() bool {
	if !b.built() {
		panic(notBuilt)
	}
	return b.shadow.Load()
}
