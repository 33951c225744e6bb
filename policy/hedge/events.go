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

// Skipped reports that a hedge was due but not sent, and Why: "breaker" when the
// breaker was not Closed or was under pressure, "budget" when the budget could
// not pay for it.
type Skipped struct {
	Attempt int
	Why     string
}

// Name returns "hedge.skipped".
func (Skipped) Name() string { return "hedge.skipped" }
