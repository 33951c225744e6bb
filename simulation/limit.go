package simulation

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/jonboulle/clockwork"

	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/policy/adaptive"
	"github.com/resilience-go/pipeline/policy/bulkhead"
)

// Limit is a limit of the calls one process has in flight, outermost, as a
// bulkhead or adaptive limit stage stands in front of the card: a call takes
// a slot as it is offered, or is refused at once, and gives it back when it
// ends, its retries and backoffs included. What is real: the bulkhead (a
// *bulkhead.Bulkhead, TryAcquire and Release) and the adaptive limit (an
// *adaptive.Limiter, TryAcquire and Done with the call's verdict, with its
// own estimator), on the run's clock. Neither has a queue here, so that a
// comparison is of the limits alone.
type Limit struct {
	// Bulkhead, if set, limits the calls in flight to a fixed number. Its
	// MaxQueue must be 0; the run supplies its Clock.
	Bulkhead *bulkhead.Config
	// Adaptive, if set, limits them to what an adaptive limiter finds. Its
	// MaxQueue must be 0 and its Estimator nil (the limiter builds its own
	// on the run's clock); the run supplies its Clock. At most one of
	// Bulkhead and Adaptive may be set; neither counts the calls as a limit
	// would (Report.Levels) and limits none.
	Adaptive *adaptive.Config
	// Critical, if above 0, marks that fraction of the calls Critical and
	// the rest Sheddable (criticality.With), each call drawn at random from
	// the process's own stream, so that the limit's shares
	// (Config.Shares of the bulkhead or the adaptive limit) decide who is
	// refused; the report counts each level apart (Report.Levels). Zero
	// leaves every call unmarked. It must be in [0, 1].
	Critical float64
	// Unmarked, with Critical, draws and counts each call's level but marks
	// no context with it: the same run without criticality, for comparison.
	Unmarked bool
}

// validate reports every setting of l that cannot work.
func (l *Limit) validate() []error {
	var errs []error
	if !(l.Critical >= 0 && l.Critical <= 1) {
		errs = append(errs, fmt.Errorf("simulation: Client.Limit.Critical must be a fraction in [0, 1], got %v", l.Critical))
	}
	if l.Bulkhead != nil && l.Adaptive != nil {
		errs = append(errs, errors.New("simulation: Client.Limit.Bulkhead and Client.Limit.Adaptive are both set: choose one"))
	}
	if l.Bulkhead != nil {
		if l.Bulkhead.MaxQueue != 0 {
			errs = append(errs, fmt.Errorf("simulation: Client.Limit.Bulkhead.MaxQueue must be 0 (the run has no queue), got %d", l.Bulkhead.MaxQueue))
		}
		if err := l.Bulkhead.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("simulation: Client.Limit.Bulkhead: %w", err))
		}
	}
	if l.Adaptive != nil {
		if l.Adaptive.MaxQueue != 0 {
			errs = append(errs, fmt.Errorf("simulation: Client.Limit.Adaptive.MaxQueue must be 0 (the run has no queue), got %d", l.Adaptive.MaxQueue))
		}
		if l.Adaptive.Estimator != nil {
			errs = append(errs, errors.New("simulation: Client.Limit.Adaptive.Estimator must be nil: the limiter builds its own on the run's clock"))
		}
		if err := l.Adaptive.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("simulation: Client.Limit.Adaptive: %w", err))
		}
	}
	return errs
}

// name says what limits the calls: "bulkhead of 16", "adaptive limit" or
// "no limit".
func (l *Limit) name() string {
	switch {
	case l.Bulkhead != nil:
		return fmt.Sprintf("bulkhead of %d", l.Bulkhead.MaxConcurrent)
	case l.Adaptive != nil:
		return "adaptive limit"
	}
	return "no limit"
}

// limiter is one process's Limit in a run.
type limiter struct {
	cfg    *Limit
	bh     *bulkhead.Bulkhead // nil: not a bulkhead
	al     *adaptive.Limiter  // nil: not an adaptive limit
	levels *rand.Rand         // draws each call's level
	ctx    [criticality.Levels + 1]context.Context
}

// newLimiter returns the limiter of l on clock, drawing levels from src;
// nil for a nil l.
func newLimiter(l *Limit, clock clockwork.Clock, src rand.Source) (*limiter, error) {
	if l == nil {
		return nil, nil
	}
	lim := &limiter{cfg: l, levels: rand.New(src)}
	var err error
	switch {
	case l.Bulkhead != nil:
		cfg := *l.Bulkhead
		cfg.Clock = clock
		if lim.bh, err = bulkhead.New(cfg); err != nil {
			return nil, fmt.Errorf("simulation: Client.Limit.Bulkhead: %w", err)
		}
	case l.Adaptive != nil:
		cfg := *l.Adaptive
		cfg.Clock = clock
		if lim.al, err = adaptive.New(cfg); err != nil {
			return nil, fmt.Errorf("simulation: Client.Limit.Adaptive: %w", err)
		}
	}
	for lv := range lim.ctx {
		lim.ctx[lv] = criticality.With(context.Background(), criticality.Level(lv))
	}
	return lim, nil
}

// level draws the level of the next call: Critical with the probability
// Limit.Critical, else Sheddable; 0 (unmarked) when Critical is 0.
func (l *limiter) level() criticality.Level {
	if l.cfg.Critical == 0 {
		return 0
	}
	if l.levels.Float64() < l.cfg.Critical {
		return criticality.Critical
	}
	return criticality.Sheddable
}

// ctxOf is the context a call of level lv takes and gives back its slot
// with: marked with lv, unless the run is unmarked.
func (l *limiter) ctxOf(lv criticality.Level) context.Context {
	if l.cfg.Unmarked {
		return l.ctx[0]
	}
	return l.ctx[lv]
}

// acquire takes a slot for a call of level lv, or reports that the limit
// refuses it.
func (l *limiter) acquire(lv criticality.Level) (adaptive.Ticket, bool) {
	switch {
	case l.bh != nil:
		_, ok := l.bh.TryAcquire(l.ctxOf(lv))
		return adaptive.Ticket{}, ok
	case l.al != nil:
		return l.al.TryAcquire(l.ctxOf(lv))
	}
	return adaptive.Ticket{}, true
}

// release gives back the slot of a call of level lv that ended with v.
func (l *limiter) release(lv criticality.Level, t adaptive.Ticket, v outcome.Verdict) {
	switch {
	case l.bh != nil:
		l.bh.Release(l.ctxOf(lv))
	case l.al != nil:
		l.al.Done(t, v)
	}
}

// limit is how many calls the limiter lets in flight now: a bulkhead's
// fixed limit, an adaptive limiter's current one, 0 without a limit.
func (l *limiter) limit() int {
	switch {
	case l.bh != nil:
		return l.bh.Limit()
	case l.al != nil:
		return l.al.Limit()
	}
	return 0
}
