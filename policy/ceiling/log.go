package ceiling

import "log/slog"

// LogValue returns the cut as a group: limit, the ceiling that passed, and
// measured, the quantile it was derived from.
func (c Cut) LogValue() slog.Value {
	return slog.GroupValue(slog.Duration("limit", c.Limit), slog.Duration("measured", c.Measured))
}

// Level returns Info: a cut is the stage doing its work, as a timeout is; the
// stop it leads to is reported on its own.
func (Cut) Level() slog.Level { return slog.LevelInfo }
