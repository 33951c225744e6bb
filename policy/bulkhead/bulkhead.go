package bulkhead

import (
	"context"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/internal/clock"
	"github.com/resilience-go/pipeline/internal/giveway"
	"github.com/resilience-go/pipeline/internal/kind"
	"github.com/resilience-go/pipeline/internal/queue"
)

// refusal is the reason of the stage's stop errors: one of our own limits
// refused the call, which says nothing of the dependency's health.
const refusal = pipeline.ConcurrencyLimited

// Bulkhead bounds how many calls are inside it at once, and queues a bounded
// number of the calls that find it full, first come, first served. Build one
// with [New] per dependency (or per pool of your own) and share it: it is not
// generic, so pipelines of different result types can share one, and [Guard]
// makes it a stage.
//
// A Bulkhead is safe for concurrent use; one mutex guards its slots, its
// queue and its count of each tenant's slots, held for the few nanoseconds of
// taking or handing over a slot. The zero Bulkhead is not usable.
type Bulkhead struct {
	// Immutable after New.
	name     string
	maxQueue int
	maxWait  time.Duration
	clock    clockwork.Clock // nil for real time
	elapsed  clock.Elapsed   // clock, which measures waits
	shares   criticality.Shares
	refused  *pipeline.StopError
	waiters  sync.Pool // of *waiter, with their channels

	// mu guards the fields below it. The fast paths (TryAcquire, Release)
	// unlock it without a defer, which would cost them a few nanoseconds:
	// nothing they run under it can panic, and no user code runs there.
	mu    sync.Mutex
	limit int                     // slots: Config.MaxConcurrent, or what SetLimit set
	caps  [criticality.Levels]int // the slots each level may fill: its share of limit
	gate  giveway.Gate            // the levels that give way after a refusal of a higher one
	inUse int                     // slots taken; above limit only after SetLimit lowered it
	// queue holds the calls waiting for a slot, by level.
	queue queue.Levels[*waiter]
	kept  kept // the slots kept for lower levels (Config.Guarantees)
	// tenants counts each tenant's slots, for Config.TenantShare.
	tenants tenants
	// regrowing says that regrow, a timer, will serve the queue again as
	// the rules loosen with time (see recheck).
	regrowing bool
	regrow    interface{ Stop() bool }
}

// waiter is a call in the queue.
type waiter struct {
	ready  chan struct{} // buffered: a slot was handed over, or the call displaced
	level  criticality.Level
	tenant string // the tenant charged for its slot; "" for none
	// Guarded by the bulkhead's mu.
	links     queue.Links[*waiter]
	granted   bool // the slot is this call's
	displaced bool // a call of a higher level took its place in the queue
}

func (w *waiter) Links() *queue.Links[*waiter] { return &w.links }

// New returns a bulkhead configured by cfg, or an error naming the first
// impossible value in cfg.
func New(cfg Config) (*Bulkhead, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b := &Bulkhead{
		name:     cfg.Name,
		maxQueue: cfg.MaxQueue,
		maxWait:  cfg.MaxWait,
		clock:    cfg.Clock,
		limit:    cfg.MaxConcurrent,
	}
	if b.maxWait == 0 {
		b.maxWait = defaultMaxWait
	}
	b.elapsed.Clock = cfg.Clock
	b.elapsed.Start()
	b.shares = cfg.Shares
	if cfg.TenantShare > 0 && cfg.TenantShare < 1 {
		b.tenants = tenants{share: cfg.TenantShare, held: make(map[string]int)}
	}
	b.kept = newKept(cfg.Guarantees)
	b.setCaps()
	b.gate = giveway.New(cfg.Shares)
	b.refused = &pipeline.StopError{Stage: kind.Bulkhead, Name: b.name, Reason: refusal}
	b.waiters.New = func() any { return &waiter{ready: make(chan struct{}, 1)} }
	return b, nil
}

// Stage says what stage b makes (see [Guard]), so that a bulkhead can stand
// for its stage where the result type is given once.
func (b *Bulkhead) Stage() pipeline.StageInfo {
	return pipeline.StageInfo{Kind: kind.Bulkhead, Name: b.name}
}

// Name returns the bulkhead's name (Config.Name).
func (b *Bulkhead) Name() string { return b.name }

// Limit returns how many calls may be inside the bulkhead at once.
func (b *Bulkhead) Limit() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit
}

// InFlight returns how many calls are inside the bulkhead now.
func (b *Bulkhead) InFlight() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inUse
}

// Queued returns how many calls wait for a slot now.
func (b *Bulkhead) Queued() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.queue.Len()
}

// SetLimit changes how many calls may be inside the bulkhead at once; n must
// be positive, or SetLimit panics. A larger limit hands the new slots to the
// queue at once; a smaller one takes effect as calls leave: none is
// interrupted. Package adaptive moves a bulkhead's limit this way.
func (b *Bulkhead) SetLimit(n int) {
	if n <= 0 {
		panic("bulkhead: SetLimit: the limit must be positive")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.limit = n
	b.setCaps()
	b.serve()
}

// TryAcquire takes a slot for a call of ctx's level (criticality.From) if
// one is free to that level (see Config.Shares), its tenant
// (criticality.Tenant) holds fewer than its bound (see Config.TenantShare),
// and no call of that level or above is queued (but for calls held back by
// their own tenant's bound), and returns how many calls are inside, this
// one included. It never waits. Every slot taken must be given back with
// [Bulkhead.Release], once, with ctx.
func (b *Bulkhead) TryAcquire(ctx context.Context) (inFlight int, ok bool) {
	l, t := criticality.From(ctx), b.tenantOf(ctx)
	b.mu.Lock()
	if inFlight, ok = b.take(l, t); !ok {
		b.refuse(l, t)
	}
	b.mu.Unlock()
	return inFlight, ok
}

// try takes a slot for a call of level l for tenant t if it can at once.
func (b *Bulkhead) try(l criticality.Level, t string) (inFlight int, ok bool) {
	b.mu.Lock()
	inFlight, ok = b.take(l, t)
	b.mu.Unlock()
	return inFlight, ok
}

// take takes a slot for a call of level l for tenant t if one is free to
// that level, t is under its bound, and no call of l or above waits that
// could take it, or, while l holds fewer slots than its guarantee, if any
// slot is free and t is under its bound; mu must be held.
func (b *Bulkhead) take(l criticality.Level, t string) (inFlight int, ok bool) {
	if b.owed(l) {
		if b.inUse >= b.limit || !b.under(t, l) {
			return 0, false
		}
	} else if !b.fits(l, b.inUse) || b.queue.Len() > 0 && b.waits(l) || !b.under(t, l) || !b.lent(l, b.inUse) {
		return 0, false
	}
	b.charge(t)
	b.hold(l, 1)
	b.inUse++
	return b.inUse, true
}

// Acquire takes a slot for a call of ctx's level (criticality.From), waiting
// in the queue for one if none is free to that level or to its tenant (see
// [Bulkhead.TryAcquire]) and the queue has room (or holds a call of a lower
// level, whose place it takes), for at most Config.MaxWait and never after
// ctx ends.
// It returns nil once the slot is the caller's; a *pipeline.StopError of
// Stage "bulkhead" if the bulkhead refused (the queue was full, or the wait
// ran out); or pipeline.Interrupted's if ctx ended first. Every slot taken
// must be given back with [Bulkhead.Release], once, with ctx.
func (b *Bulkhead) Acquire(ctx context.Context) error {
	if _, stop := (*gate)(b).Admit(ctx, pipeline.Events{}); stop != nil {
		return stop
	}
	return nil
}

// wait is Acquire for a call of level l and tenant t that found no slot
// free: it takes one freed since, or queues for one. It returns how long
// the call queued (-1 if it did not) and the error Acquire returns.
func (b *Bulkhead) wait(ctx context.Context, l criticality.Level, t string) (waited time.Duration, err *pipeline.StopError) {
	b.mu.Lock()
	if _, ok := b.take(l, t); ok { // a slot was freed since
		b.mu.Unlock()
		return -1, nil
	}
	if b.queue.Len() >= b.maxQueue && !b.displace(l) {
		b.refuse(l, t)
		b.mu.Unlock()
		return -1, b.refused
	}
	w := b.waiters.Get().(*waiter)
	w.level, w.tenant = l, t
	b.queue.Push(l, w)
	b.short(l, t)
	b.recheck()
	b.mu.Unlock()

	start := b.elapsed.Read()
	var expired <-chan time.Time
	if b.clock != nil {
		t := b.clock.NewTimer(b.maxWait)
		defer t.Stop()
		expired = t.Chan()
	} else {
		t := time.NewTimer(b.maxWait)
		defer t.Stop()
		expired = t.C
	}
	var stop *pipeline.StopError
	select {
	case <-w.ready:
	case <-expired:
		stop = b.refused
	case <-ctx.Done():
		stop = pipeline.Interrupted(ctx, b.Stage())
	}
	b.mu.Lock()
	if stop == b.refused && !w.granted && !w.displaced {
		b.serve() // a wait runs out only if no slot may be its call's now
	}
	switch {
	case w.displaced: // a call of a higher level took its place
		if stop == nil {
			stop = b.refused
		} else { // the wait ended as well: take the word back
			<-w.ready
		}
	case stop == nil: // the slot was handed over
	case w.granted && stop == b.refused: // handed over as the wait ran out: take it
		<-w.ready
		stop = nil
	case w.granted: // handed over as ctx ended: the caller is gone, pass it on
		<-w.ready
		b.release(l, t)
	default:
		b.queue.Remove(w.level, w)
		if stop == b.refused { // the wait ran out
			b.refuse(l, t)
		}
	}
	b.recheck()
	b.mu.Unlock()
	w.granted, w.displaced, w.tenant = false, false, ""
	b.waiters.Put(w)
	return b.elapsed.Read() - start, stop
}

// Release gives back a slot taken by [Bulkhead.TryAcquire] or
// [Bulkhead.Acquire] with ctx, the context the slot was taken with: its
// tenant (criticality.Tenant) is the one whose slot it was (see
// Config.TenantShare) and its level (criticality.From) the one whose slot
// it was (see Config.Guarantees); a bulkhead that counts neither reads
// nothing of ctx. The slot goes to the first call in the queue that may
// have it (see Config.Shares, Config.Guarantees and Config.TenantShare), or
// back to the bulkhead. Release panics if no slot is taken, or none by
// ctx's tenant or level, as releasing a semaphore more than it holds does:
// a Release without its Acquire would let one call too many in. A context
// with another tenant or level than the one the slot was taken with, where
// both hold slots, charges the wrong one, and cannot be told.
func (b *Bulkhead) Release(ctx context.Context) { (*gate)(b).Release(ctx, pipeline.Permit{}) }

// Release is [Bulkhead.Release], written here so that the stage, which
// calls it through pipeline.Gate, pays no call of a wrapper.
func (g *gate) Release(ctx context.Context, _ pipeline.Permit) {
	b := (*Bulkhead)(g)
	t := b.tenantOf(ctx)
	var l criticality.Level
	if b.kept.on {
		l = level(criticality.From(ctx))
	}
	b.mu.Lock()
	if b.inUse <= 0 {
		b.mu.Unlock()
		panic("bulkhead: Release without a slot taken")
	}
	if t != "" && b.tenants.held[t] == 0 {
		b.mu.Unlock()
		panic("bulkhead: Release for a tenant that holds no slot (release with the context the slot was taken with)")
	}
	if l != 0 && b.kept.held[l-1] == 0 {
		b.mu.Unlock()
		panic("bulkhead: Release for a level that holds no slot (release with the context the slot was taken with)")
	}
	b.release(l, t)
	b.mu.Unlock()
}

// release is Release for a call of level l and tenant t; mu must be held.
// The slot passes to the call of the queue next allows, or else back to
// the bulkhead.
func (b *Bulkhead) release(l criticality.Level, t string) {
	b.discharge(t)
	b.hold(l, -1)
	b.inUse--
	b.serve()
}

// serve hands free slots to the queued calls next allows, one at a time,
// while there are both; mu must be held. A release frees one slot, and it
// may also let a queued call take a slot that was free already: one whose
// level the release made owed its guarantee again.
func (b *Bulkhead) serve() {
	for b.queue.Len() > 0 && b.inUse < b.limit {
		w, ok := b.next(b.inUse)
		if !ok {
			break
		}
		b.inUse++
		b.queue.Remove(w.level, w)
		b.grant(w)
	}
	b.recheck()
}

// regrowStep is how often the queue is served again while the rules loosen
// with time alone, on the bulkhead's clock: a tenth of giveway.Recovery.
const regrowStep = giveway.Recovery / 10

// recheck arms, while calls wait and the rules loosen with time alone (a
// level gives way and its share grows back; a guarantee's hold-back runs
// out), a timer that serves the queue again at the next multiple of
// regrowStep since New. So a call held back by a share that has grown
// back, or by a slot kept for a guarantee nobody came for, gets a free
// slot within regrowStep, without waiting for a release. One timer at a
// time; it stops once the queue is empty or nothing loosens with time.
// mu must be held.
func (b *Bulkhead) recheck() {
	if b.queue.Len() == 0 { // nobody left to serve: no timer outlives the calls
		if b.regrowing && b.regrow.Stop() {
			b.regrowing = false
		}
		return
	}
	if b.regrowing {
		return
	}
	now := b.elapsed.Read()
	if b.kept.until <= now && b.gate.Settles(now) == 0 {
		return
	}
	b.regrowing = true
	d := regrowStep - now%regrowStep
	if b.clock != nil {
		b.regrow = b.clock.AfterFunc(d, b.regrown)
	} else {
		b.regrow = time.AfterFunc(d, b.regrown)
	}
}

// regrown serves the queue again, at recheck's timer.
func (b *Bulkhead) regrown() {
	b.mu.Lock()
	b.regrowing = false
	b.serve()
	b.mu.Unlock()
}

// setCaps computes the slots each level may fill; mu must be held, or b
// not yet shared.
func (b *Bulkhead) setCaps() {
	for i := range b.caps {
		b.caps[i] = b.shares.Cap(criticality.Level(i+1), b.limit)
	}
	if b.counts() {
		b.setBounds()
	}
	b.setKept()
}

// fits reports whether a call of level l may take a slot when used are
// taken: while no level gives way, by the caps; otherwise by the gate, at
// a reading of the clock; mu must be held.
func (b *Bulkhead) fits(l criticality.Level, used int) bool {
	if !b.gate.Squeezed() {
		return used < b.cap(l)
	}
	return b.gate.Admits(l, float64(used), float64(b.limit), b.elapsed.Read())
}

// cap is the slots calls of level l may fill; mu must be held.
func (b *Bulkhead) cap(l criticality.Level) int {
	if !l.Valid() {
		l = criticality.Default
	}
	return b.caps[l-1]
}

// grant hands a slot to w, which has been taken out of the queue, and
// charges its tenant; mu must be held. The send never blocks: w.ready has
// room for it.
func (b *Bulkhead) grant(w *waiter) {
	b.charge(w.tenant)
	b.hold(w.level, 1)
	w.granted = true
	w.ready <- struct{}{}
}

// displace makes room in the full queue for a call of level l by refusing
// its newest call of the lowest level, if that level is below l, and
// reports whether it did; mu must be held.
func (b *Bulkhead) displace(l criticality.Level) bool {
	w, lowest, ok := b.queue.Last()
	if !ok || lowest >= l {
		return false
	}
	b.queue.Remove(lowest, w)
	b.refuse(lowest, w.tenant)
	w.displaced = true
	w.ready <- struct{}{}
	return true
}
