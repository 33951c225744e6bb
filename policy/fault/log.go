package fault

import "log/slog"

// LogValue returns the injection as a group: attempt, kind and, for a Latency
// fault, delay.
func (i Injected) LogValue() slog.Value {
	if i.Kind == Latency {
		return slog.GroupValue(slog.Int("attempt", i.Attempt), slog.String("kind", i.Kind.String()), slog.Duration("delay", i.Delay))
	}
	return slog.GroupValue(slog.Int("attempt", i.Attempt), slog.String("kind", i.Kind.String()))
}

// Level returns Debug: injections are as frequent as they were configured to
// be, and the stages around them report what they did about each.
func (Injected) Level() slog.Level { return slog.LevelDebug }
