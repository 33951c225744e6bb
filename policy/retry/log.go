package retry

import (
	"log/slog"

	"github.com/resilience-go/pipeline/internal/logattr"
)

// LogValue returns the scheduled retry as a group: attempt (the one that will
// run), delay, the failed attempt's verdict (its kind, with retry_after,
// self_imposed and canceled when set) and, when set, its err.
func (s Scheduled) LogValue() slog.Value {
	attrs := make([]slog.Attr, 0, 6)
	attrs = append(attrs, slog.Int("attempt", s.Attempt), slog.Duration("delay", s.Delay))
	attrs = logattr.Verdict(attrs, s.Verdict)
	if s.Err != nil {
		attrs = append(attrs, slog.String("err", s.Err.Error()))
	}
	return slog.GroupValue(attrs...)
}

// Level returns Debug: a retry is routine; a storm of them shows in the
// metrics, and a call that runs out of them is reported by its stop.
func (Scheduled) Level() slog.Level { return slog.LevelDebug }
