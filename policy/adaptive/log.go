package adaptive

import "log/slog"

// LogValue returns the revision as a group: the limit from and to, why, the
// recent and baseline latency, the peak in flight, the queue and the
// throttled answers of the interval.
func (r Revision) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Int("from", r.From), slog.Int("to", r.To), slog.String("why", r.Why.String()),
		slog.Duration("recent", r.Recent), slog.Duration("baseline", r.Baseline),
		slog.Int("peak", r.Peak), slog.Int("queued", r.Queued), slog.Int("throttled", r.Throttled))
}

// Level returns Info for a cut, which says the dependency is struggling, and
// Debug for any other revision.
func (r Revision) Level() slog.Level {
	if r.To < r.From {
		return slog.LevelInfo
	}
	return slog.LevelDebug
}
