package hedge

import "log/slog"

// LogValue returns the hedge as a group: attempt, hedge (the copy's number,
// from 1) and delay.
func (h Hedged) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Int("attempt", h.Attempt),
		slog.Int("hedge", h.Hedge),
		slog.Duration("delay", h.Delay),
	)
}

// Level returns Debug: hedging is routine by design.
func (Hedged) Level() slog.Level { return slog.LevelDebug }

// LogValue returns the skipped hedge as a group: attempt and why.
func (s Skipped) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("attempt", s.Attempt), slog.String("why", s.Why))
}

// Level returns Debug: a hedge held back by the breaker or the budget is
// those doing their work; their own events say why.
func (Skipped) Level() slog.Level { return slog.LevelDebug }

// LogValue returns the win as a group: attempt and hedge, the copy that won.
func (w Won) LogValue() slog.Value {
	return slog.GroupValue(slog.Int("attempt", w.Attempt), slog.Int("hedge", w.Hedge))
}

// Level returns Debug: a hedge winning is the stage doing its work.
func (Won) Level() slog.Level { return slog.LevelDebug }
