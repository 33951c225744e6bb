package ratelimit

import (
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/internal/clock"
	"github.com/resilience-go/pipeline/internal/kind"
)

// refusal is the reason of the stage's stop errors: one of our own limits
// refused the call, which says nothing of the dependency's health.
const refusal = pipeline.RateLimited

// Limiter is a token bucket shared by every call that goes through it: it
// admits Rate calls a second on average and at most Burst at once. Build one
// with [New] per dependency (or per quota) and share it: it is not generic, so
// pipelines of different result types can share one, and [Guard] makes it a
// stage.
//
// The bucket is kept as one number, the theoretical arrival time of the next
// call (the generic cell rate algorithm): a call arriving at now is admitted
// if that time is no more than Burst-1 intervals ahead of now, and pushes it
// one interval further. It is updated with a compare-and-swap, so admission
// takes no lock, and the clock is read after the bucket, so that no reading
// is older than the bucket's last change: the calls it admits at readings
// within any stretch of time d number at most Rate × d + Burst, however its
// callers are scheduled.
//
// A Limiter is safe for concurrent use. The zero Limiter is not usable.
type Limiter struct {
	// Immutable after New.
	name     string
	rate     float64
	burst    int
	interval int64 // nanoseconds a token takes to earn
	// tolerances is how far ahead of now tat may run for a call of each
	// level: (Shares.Cap(level, burst)-1) × interval, (burst-1) × interval
	// for Critical.
	tolerances [criticality.Levels]int64
	levelled   bool // the tolerances differ, so a call's level matters
	maxWait    time.Duration
	clock      clockwork.Clock // nil for real time; times the waits
	elapsed    clock.Elapsed   // reads clock; times are nanoseconds since its epoch

	// tat is the theoretical arrival time of the next call, in nanoseconds
	// on elapsed: the one word of the limiter's state.
	tat atomic.Int64
	// refused is the latest refusal made, shared by the refusals with the same
	// hint to the millisecond, so that refusing allocates nothing under load.
	refused atomic.Pointer[pipeline.StopError]
}

// New returns a limiter configured by cfg, full (Burst calls may go at once),
// or an error naming the first impossible value in cfg.
func New(cfg Config) (*Limiter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	l := &Limiter{
		name:     cfg.Name,
		rate:     cfg.Rate,
		burst:    cfg.burst(),
		interval: intervalOf(cfg.Rate),
		maxWait:  cfg.MaxWait,
		clock:    cfg.Clock,
	}
	for i := range l.tolerances {
		l.tolerances[i] = int64(cfg.Shares.Cap(criticality.Level(i+1), l.burst)-1) * l.interval
	}
	l.levelled = l.tolerances[0] != l.tolerances[criticality.Levels-1]
	l.elapsed.Clock = cfg.Clock
	l.elapsed.Start()
	return l, nil
}

// Stage says what stage l makes (see [Guard]), so that a limiter can stand for
// its stage where the result type is given once.
func (l *Limiter) Stage() pipeline.StageInfo {
	return pipeline.StageInfo{Kind: kind.Rate, Name: l.name}
}

// Name returns the limiter's name (Config.Name).
func (l *Limiter) Name() string { return l.name }

// Rate returns the calls a second the limiter admits on average.
func (l *Limiter) Rate() float64 { return l.rate }

// Burst returns the most calls the limiter admits at once: Config.Burst with
// its default.
func (l *Limiter) Burst() int { return l.burst }

// MaxWait returns how long a call through the limiter's stage may wait for a
// token (Config.MaxWait).
func (l *Limiter) MaxWait() time.Duration { return l.maxWait }

// now is the time elapsed on the limiter's clock since New, in nanoseconds,
// or since its first call if that came before New's reading: a limiter
// built in one time domain (outside a synctest bubble) and called in another
// whose time is behind (inside it) is timed on its callers' clock
// (clock.Elapsed).
func (l *Limiter) now() int64 { return int64(l.elapsed.Read()) }

// Allow takes a token if one is there and reports true; otherwise it takes
// nothing and reports false with wait, how long it will be until a token is
// there if nobody else takes it first (as budget.Budget.Withdraw does). It never waits. It is for code outside a
// pipeline; the stage ([Guard]) calls it, or waits, for every call.
//
// Allow takes a token as for a call of level Default, which may take the
// whole bucket; the stage takes one for the call's own level.
func (l *Limiter) Allow() (wait time.Duration, ok bool) {
	wait, _, ok = l.reserve(0, criticality.Default)
	return wait, ok
}

// Tokens returns how many calls the limiter would admit at once now: between
// 0 and Burst, fractional while a token is being earned, and negative while
// calls wait for tokens already promised to them.
func (l *Limiter) Tokens() float64 {
	tat := l.tat.Load()
	ahead := max(tat-l.now(), 0) // the tokens taken and not yet earned back, as time
	return float64(l.burst) - float64(ahead)/float64(l.interval)
}

// reservation is a token promised to a call that waits for it: cancel gives it
// back if no later call has been promised one since.
type reservation struct {
	before, after int64 // tat before and after the promise
}

// reserve takes a token now for a call of level lv, or promises one if it
// comes within limit, and returns how long the call must wait for it (0 for
// now). If the token is further than limit, it takes nothing and returns
// false with how long until the next token lv may take. A level below
// Critical may take a token only while its share of the bucket is left
// (Config.Shares): its tolerance is shorter.
func (l *Limiter) reserve(limit time.Duration, lv criticality.Level) (wait time.Duration, r reservation, ok bool) {
	if !lv.Valid() {
		lv = criticality.Default
	}
	tolerance := l.tolerances[lv-1]
	for {
		tat := l.tat.Load()
		now := l.now() // read after tat: a reading older than tat's last update cannot add tokens
		next := max(tat, now)
		w := next - tolerance - now
		if w > int64(limit) {
			return time.Duration(w), reservation{}, false
		}
		if l.tat.CompareAndSwap(tat, next+l.interval) {
			return time.Duration(max(w, 0)), reservation{before: tat, after: next + l.interval}, true
		}
	}
}

// cancel gives back the token of r, promised to a call that will not use it,
// if no later call has been promised one since; otherwise the token is lost,
// which errs on the side of admitting fewer calls.
func (l *Limiter) cancel(r reservation) {
	l.tat.CompareAndSwap(r.after, r.before)
}

// sharedRefusal is the stop error of a refusal with the hint wait, rounded up
// to the millisecond as a verdict's hint is. Refusals with the same hint share
// one error, the latest one made: treat it as read-only.
func (l *Limiter) sharedRefusal(wait time.Duration) *pipeline.StopError {
	wait = (wait + time.Millisecond - 1).Truncate(time.Millisecond)
	if e := l.refused.Load(); e != nil && e.RetryAfter == wait {
		return e
	}
	e := &pipeline.StopError{Stage: kind.Rate, Name: l.name, Reason: refusal, RetryAfter: wait}
	l.refused.Store(e)
	return e
}
