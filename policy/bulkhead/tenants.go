package bulkhead

import (
	"context"
	"math"

	"github.com/resilience-go/pipeline/criticality"
)

// tenants is what a bulkhead with a Config.TenantShare keeps of the tenants
// of its calls: the slots each holds, and the most each may hold.
type tenants struct {
	// share is Config.TenantShare, in (0, 1), or 0 when tenants are not
	// counted (the config said 0 or 1). Immutable after New.
	share float64
	// Guarded by the bulkhead's mu.
	held   map[string]int          // slots held by tenant; a tenant holding none has no entry
	bounds [criticality.Levels]int // the most one tenant may hold for each level while no level gives way
}

// part is a tenant's part of n slots: share × n, rounded down after
// rounding to a millionth (so that 0.7 of 10 is 7, as for the levels'
// caps), and at least 1.
func (ts *tenants) part(n int) int {
	return max(1, int(math.Floor(math.Round(ts.share*float64(n)*1e6)/1e6)))
}

// counts reports whether b counts the slots of each tenant.
func (b *Bulkhead) counts() bool { return b.tenants.share > 0 }

// tenantOf is the tenant b charges for a call of ctx: its tenant, or ""
// when b counts no tenants (a call without a tenant is charged to none). It
// is small enough to be inlined, so that a bulkhead without a TenantShare
// pays a comparison for it.
func (b *Bulkhead) tenantOf(ctx context.Context) string {
	if !b.counts() {
		return ""
	}
	return tenantIn(ctx)
}

// tenantIn is criticality.Tenant, kept out of line for tenantOf.
//
//go:noinline
func tenantIn(ctx context.Context) string { return criticality.Tenant(ctx) }

// setBounds computes each level's bound per tenant from the caps; mu must
// be held, or b not yet shared.
func (b *Bulkhead) setBounds() {
	for i, c := range b.caps {
		b.tenants.bounds[i] = b.tenants.part(c)
	}
}

// bound is the most slots one tenant may hold for a call of level l: its
// part of the slots l may fill, by the caps while no level gives way, or
// else of the slots the gate lets l fill now; mu must be held.
func (b *Bulkhead) bound(l criticality.Level) int {
	if !l.Valid() {
		l = criticality.Default
	}
	if !b.gate.Squeezed() {
		return b.tenants.bounds[l-1]
	}
	return b.tenants.part(b.gate.Cap(l, b.limit, b.elapsed.Read()))
}

// under reports whether tenant t may take one more slot for a call of level
// l: always for no tenant (and so for every call of a bulkhead that counts
// none), otherwise while t holds fewer than its bound; mu must be held.
func (b *Bulkhead) under(t string, l criticality.Level) bool {
	return t == "" || b.holdsLess(t, l)
}

// holdsLess reports whether tenant t holds fewer slots than its bound for a
// call of level l; mu must be held. Out of line, so that under is inlined.
//
//go:noinline
func (b *Bulkhead) holdsLess(t string, l criticality.Level) bool {
	n := b.tenants.held[t]
	return n == 0 || n < b.bound(l) // every bound is at least 1
}

// charge counts a slot taken for tenant t; mu must be held.
func (b *Bulkhead) charge(t string) {
	if t != "" {
		b.tenants.held[t]++
	}
}

// discharge counts a slot given back by tenant t, which holds one; mu must
// be held. A tenant that holds none is forgotten, so that the map does not
// grow with the tenants that have come and gone.
func (b *Bulkhead) discharge(t string) {
	if t == "" {
		return
	}
	if n := b.tenants.held[t] - 1; n > 0 {
		b.tenants.held[t] = n
	} else {
		delete(b.tenants.held, t)
	}
}

// next is the queued call a slot goes to when used are taken: a call whose
// level is owed its guarantee (see nextOwed), or else the first in the
// queue's order (highest level first, then oldest) whose level may fill one
// more slot and whose tenant may hold one more; mu must be held. A lower
// level never fits where a higher one does not, so the search ends at the
// first call whose level does not fit; a call held back by its tenant's
// bound is passed over.
func (b *Bulkhead) next(used int) (*waiter, bool) {
	if b.kept.on {
		if w, ok := b.nextOwed(used); ok {
			return w, true
		}
	}
	if !b.counts() {
		w, l, ok := b.queue.Front()
		return w, ok && b.fits(l, used) && b.lent(l, used)
	}
	for w := range b.queue.All() {
		if !b.fits(w.level, used) || !b.lent(w.level, used) {
			break
		}
		if b.under(w.tenant, w.level) {
			return w, true
		}
	}
	return nil, false
}

// waits reports whether a queued call of level l or above would take a
// slot freed for it: any, when b counts no tenants; otherwise one whose
// tenant is under its bound, since a call held back by its own tenant
// holds up nobody else; mu must be held, and the queue not empty.
func (b *Bulkhead) waits(l criticality.Level) bool {
	if !b.queue.AtOrAbove(l) {
		return false
	}
	if !b.counts() {
		return true
	}
	for w := range b.queue.All() {
		if w.level < l {
			break
		}
		if b.under(w.tenant, w.level) {
			return true
		}
	}
	return false
}

// refuse records the refusal of a call of level l for tenant t: the levels
// below l give way (see giveway), unless t holds its bound, for then the
// level was not short of slots, the tenant was; mu must be held.
func (b *Bulkhead) refuse(l criticality.Level, t string) {
	if b.under(t, l) {
		b.gate.Refused(l, b.elapsed.Read())
	}
	b.short(l, t)
	b.recheck()
}
