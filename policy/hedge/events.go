package hedge

import "time"

// Hedged reports that the stage sent a hedge: attempt number Attempt of the
// call (every hedge of one attempt shares its number) got its Hedge-th extra
// copy, Delay after the previous one started.
type Hedged struct {
	Attempt int
	Hedge   int
	Delay   time.Duration
}

// Name returns "hedge.sent".
func (Hedged) Name() string { return "hedge.sent" }

// Won reports that hedge number Hedge of attempt Attempt won its race: the
// stage returns that copy's result, which is acceptable (OK, or a Permanent
// one no copy could improve on). It is emitted once per hedged call that a
// hedge won, after the losers were released, and not when the first copy won.
type Won struct {
	Attempt int
	Hedge   int
}

// Name returns "hedge.won".
func (Won) Name() string { return "hedge.won" }

// Skipped reports that a hedge was due but not sent, and Why: "breaker" when the
// breaker was not Closed or was under pressure, "extra" when the attempts armed
// had not earned it (Config.MaxExtra), "budget" when the budget could not pay
// for it.
type Skipped struct {
	Attempt int
	Why     string
}

// Name returns "hedge.skipped".
func (Skipped) Name() string { return "hedge.skipped" }
