package timeout

import "log/slog"

// LogValue returns the timeout as a group: timeout, the limit that passed,
// and for a ceiling's cut measured, the quantile it was derived from.
func (t TimedOut) LogValue() slog.Value {
	if t.Measured == 0 {
		return slog.GroupValue(slog.Duration("timeout", t.Timeout))
	}
	return slog.GroupValue(slog.Duration("timeout", t.Timeout), slog.Duration("measured", t.Measured))
}

// Level returns Info: a timeout is the stage doing its work, and the stop it
// leads to is reported on its own.
func (TimedOut) Level() slog.Level { return slog.LevelInfo }
