package ratelimit

import "log/slog"

// LogValue returns the wait as a group: wait, how long the call waited for
// its token.
func (w Waited) LogValue() slog.Value { return slog.GroupValue(slog.Duration("wait", w.Wait)) }

// Level returns Debug: waiting is the limiter doing its work.
func (Waited) Level() slog.Level { return slog.LevelDebug }
