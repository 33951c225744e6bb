package bulkhead

import "log/slog"

// LogValue returns the wait as a group: wait, how long the call queued for
// its slot.
func (w Waited) LogValue() slog.Value { return slog.GroupValue(slog.Duration("wait", w.Wait)) }

// Level returns Debug: queueing is the bulkhead doing its work.
func (Waited) Level() slog.Level { return slog.LevelDebug }
