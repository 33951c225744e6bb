package timeout

import "log/slog"

// LogValue returns the timeout as a group: timeout, the limit that passed.
func (t TimedOut) LogValue() slog.Value {
	return slog.GroupValue(slog.Duration("timeout", t.Timeout))
}

// Level returns Info: a timeout is the stage doing its work, and the stop it
// leads to is reported on its own.
func (TimedOut) Level() slog.Level { return slog.LevelInfo }
